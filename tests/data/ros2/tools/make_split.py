#!/usr/bin/env python3
"""Generate the split rosbag2 bags of this folder: one bag, three storage files, one metadata.yaml.

usage: python3 make_split.py OUTDIR   (needs rosbags==0.11.9; writes OUTDIR/gen_split_db3/ and OUTDIR/gen_split_mcap/)

rosbags' Writer writes one storage file per bag, so each storage file is written by it as a bag of its
own (the same connections, in the same order; the last file adds a topic), and the three are put in one
directory with one metadata.yaml that lists them (relative_file_paths, files) and sums their topics, as
rosbag2 writes a bag split by size. The files overlap in time on purpose: a reader must merge them by
log time. The expected dump is rosbags' AnyReader on the directory (`dump_ros2.py --engine rosbags DIR`).
The same OUTDIR content comes out on every run.
"""
import shutil
import sys
import tempfile
from pathlib import Path

T0 = 1_700_000_000_000_000_000  # ns


def parts():
    """Per storage file: the (topic, timestamp, text) of its messages, in write order."""
    return [
        [('/chatter', T0 + 0, 'p0 a'), ('/count', T0 + 10, 'p0 b'), ('/chatter', T0 + 40, 'p0 c')],
        [('/chatter', T0 + 20, 'p1 a'), ('/count', T0 + 40, 'p1 b, same time as p0 c'), ('/chatter', T0 + 70, 'p1 c')],
        [('/chatter', T0 + 50, 'p2 a'), ('/late', T0 + 60, 'p2 only topic'), ('/count', T0 + 80, 'p2 c')],
    ]


def make(out: Path):
    import ruamel.yaml
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore
    from rosbags.typesys.stores.ros2_jazzy import std_msgs__msg__String as Str

    ts = get_typestore(Stores.ROS2_JAZZY)
    yaml = ruamel.yaml.YAML()
    for storage, suffix in ((StoragePlugin.SQLITE3, 'db3'), (StoragePlugin.MCAP, 'mcap')):
        bag = out / f'gen_split_{suffix}'
        if bag.exists():
            shutil.rmtree(bag)
        bag.mkdir(parents=True)
        metas = []
        for i, msgs in enumerate(parts()):
            tmp = Path(tempfile.mkdtemp()) / 'bag'
            with Writer(tmp, version=9, storage_plugin=storage) as w:
                conns = {t: w.add_connection(t, 'std_msgs/msg/String', typestore=ts) for t in ('/chatter', '/count')}
                if any(t == '/late' for t, _, _ in msgs):
                    conns['/late'] = w.add_connection('/late', 'std_msgs/msg/String', typestore=ts)
                for topic, t, text in msgs:
                    w.write(conns[topic], t, ts.serialize_cdr(Str(data=text), 'std_msgs/msg/String'))
            name = f'gen_split_{suffix}_{i}.{suffix}'
            shutil.copyfile(next(tmp.glob(f'*.{suffix}')), bag / name)
            metas.append((name, yaml.load((tmp / 'metadata.yaml').read_text())))
            shutil.rmtree(tmp.parent)
        # One metadata.yaml for the three: the first file's, with every file listed and the topics summed.
        info = metas[0][1]['rosbag2_bagfile_information']
        topics, order = {}, []
        files, start, end, total = [], None, None, 0
        for name, m in metas:
            mi = m['rosbag2_bagfile_information']
            s, d = mi['starting_time']['nanoseconds_since_epoch'], mi['duration']['nanoseconds']
            start = s if start is None else min(start, s)
            end = s + d if end is None else max(end, s + d)
            total += mi['message_count']
            files.append({'path': name, 'starting_time': {'nanoseconds_since_epoch': s},
                          'duration': {'nanoseconds': d}, 'message_count': mi['message_count']})
            for t in mi['topics_with_message_count']:
                key = t['topic_metadata']['name']
                if key not in topics:
                    topics[key] = t
                    order.append(key)
                else:
                    topics[key]['message_count'] += t['message_count']
        info['relative_file_paths'] = [n for n, _ in metas]
        info['files'] = files
        info['starting_time']['nanoseconds_since_epoch'] = start
        info['duration']['nanoseconds'] = end - start
        info['message_count'] = total
        info['topics_with_message_count'] = [topics[k] for k in order]
        with (bag / 'metadata.yaml').open('w') as f:
            yaml.dump(metas[0][1], f)


if __name__ == '__main__':
    o = Path(sys.argv[1])
    o.mkdir(parents=True, exist_ok=True)
    make(o)
