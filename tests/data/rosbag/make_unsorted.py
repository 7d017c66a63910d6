#!/usr/bin/env python3
"""Writes `gen_unsorted.bag`: a small indexed ROS1 bag whose messages are NOT stored in time order,
for the time-order tests (tests/it/rosbag.rs). Needs rosbags 0.11.9 (`pip install rosbags==0.11.9`).

Usage: python3 make_unsorted.py OUT.bag

Chunks (uncompressed, closed by hand; record times in seconds):
  A  1, 2, 3 (two connections)                          in order, alone: the one-walk path
  B  10, 8, 12, 9, 11 (conn 2), 11 (conn 0)             out of order inside the chunk, a tie whose
                                                        connections are stored in descending order
  C  9.5, 11 (conn 1), 13                               overlaps B
  D  20, 21 (conn 0), 21 (conn 1), 22                   in order inside, overlaps E
  E  21.5, 23                                           in order inside, overlaps D
  F  30 (conn 2), 30 (conn 1)                           a tie stored with descending connections
  G  30, 31                                             starts where F ends (spans that touch)
  H  40, 41, 42                                         in order, alone
"""

import sys
from pathlib import Path

from rosbags.rosbag1 import Writer
from rosbags.typesys import Stores, get_typestore

S = 1_000_000_000
ts = get_typestore(Stores.ROS1_NOETIC)
Int32 = ts.types['std_msgs/msg/Int32']
String = ts.types['std_msgs/msg/String']

out = Path(sys.argv[1])
if out.exists():
    sys.exit(f'{out} exists')

CHUNKS = [
    [(1.0, 0), (2.0, 1), (3.0, 0)],
    [(10.0, 0), (8.0, 1), (12.0, 2), (9.0, 0), (11.0, 2), (11.0, 0)],
    [(9.5, 2), (11.0, 1), (13.0, 0)],
    [(20.0, 2), (21.0, 0), (21.0, 1), (22.0, 2)],
    [(21.5, 0), (23.0, 1)],
    [(30.0, 2), (30.0, 1)],
    [(30.0, 0), (31.0, 2)],
    [(40.0, 0), (41.0, 1), (42.0, 2)],
]

with Writer(out) as w:
    conns = [
        w.add_connection('/count', Int32.__msgtype__, typestore=ts),
        w.add_connection('/text', String.__msgtype__, typestore=ts),
        w.add_connection('/other', Int32.__msgtype__, typestore=ts),
    ]
    n = 0
    for chunk in CHUNKS:
        for i, (t, c) in enumerate(chunk):
            # The writer closes a chunk when it grows past the threshold: the last message of
            # each chunk closes it.
            w.chunk_threshold = 0 if i == len(chunk) - 1 else 1 << 20
            if conns[c].msgtype == 'std_msgs/msg/String':
                data = ts.serialize_ros1(String(data=f'message {n}'), String.__msgtype__)
            else:
                data = ts.serialize_ros1(Int32(data=n), Int32.__msgtype__)
            w.write(conns[c], int(t * S), data)
            n += 1
