"""Errors and warnings carry their place as attributes, taken from the engine's structured error
(not read back out of its text), and say what the `logspec` command says: an exception's
message is the command's last line on stderr, a warning's message each line before it, with
`file`, `offset`, `record` and `field` where the engine knows them. The bytes are written here
with Python's `struct` from the layouts of the USVLOG spec (docs/formats/usvlog.md), an
independent reference for where each record starts."""

from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path

import pytest

import logspec

from conftest import DATA, dump_run, need, run


def header(t0=0, schema=1):
    # magic, fw_model_schema, endianness (1: little), t0_us, 13 reserved bytes: 32 bytes.
    return struct.pack("<6sIBQ13x", b"USVLOG", schema, 1, t0)


def record(t, type_id, payload):
    # t_us (u64), type (u16), len (u16), then the payload.
    return struct.pack("<QHH", t, type_id, len(payload)) + payload


GYRO = struct.pack("<2fB3x", 0.5, 0.25, 1)  # REC_SENSOR_GYRO (13): z_gyro, b_g_est, valid, 3 pad
GYRO_AT = [32 + i * (12 + len(GYRO)) for i in range(3)]


def test_a_bad_record_is_a_warning_with_its_place_then_an_error(tmp_path: Path, logspec_bin: str):
    # Record #1 is a REC_SENSOR_GYRO one byte too long: skipped with a warning, the others kept,
    # and the read ends with a DecodeError that counts it.
    p = tmp_path / "bad_gyro.usvlog"
    p.write_bytes(header() + record(1, 13, GYRO) + record(2, 13, GYRO + b"\0") + record(3, 13, GYRO))
    expected, status, notes = dump_run(logspec_bin, p)
    assert status == 1 and len(notes) == 2, notes
    got = []
    with pytest.warns(logspec.LogspecWarning) as caught:
        with pytest.raises(logspec.DecodeError) as info:
            for r in logspec.open(p):
                got.append(r)
    assert [r["t_us"] for r in got] == [r["t_us"] for r in expected] == [1, 3]
    [w] = [w.message for w in caught]
    assert str(w) == w.message == notes[0]
    assert (w.file, w.offset, w.record) == (str(p), GYRO_AT[1], 1)
    assert w.field is not None and w.field.startswith("REC_SENSOR_GYRO"), w.field
    assert w.field in str(w)
    e = info.value
    assert str(e) == e.message == notes[1]
    assert e.file == str(p) and e.offset is None and e.record is None


@pytest.mark.parametrize("keep", [GYRO_AT[2] + 5, GYRO_AT[2] + 12 + 3])
def test_a_cut_record_names_its_offset_and_index(tmp_path: Path, logspec_bin: str, keep: int):
    need("pyarrow")  # the tables
    # Cut inside record #2's payload, then inside its header.
    p = tmp_path / "cut.usvlog"
    p.write_bytes((header() + record(1, 13, GYRO) + record(2, 13, GYRO) + record(3, 13, GYRO))[:keep])
    _, status, notes = dump_run(logspec_bin, p)
    assert status == 1
    with pytest.raises(logspec.DecodeError) as info:
        list(logspec.open(p))
    e = info.value
    assert (e.file, e.offset, e.record) == (str(p), GYRO_AT[2], 2)
    assert str(e) == e.message == notes[-1]
    # The same error through the tables, and as a warning with on_error="warn".
    with pytest.raises(logspec.DecodeError) as info:
        logspec.open(p).tables()
    assert (info.value.offset, info.value.record, str(info.value)) == (e.offset, e.record, str(e))
    with pytest.warns(logspec.LogspecWarning) as caught:
        assert len(list(logspec.open(p).records(on_error="warn"))) == 2
    [w] = [w.message for w in caught]
    assert w.error is not None and (w.offset, w.record, w.file) == (e.offset, e.record, e.file)


SAMPLES = [
    DATA / "usvlog" / "step.usvlog",
    DATA / "rlog" / "akit_v1.8.1_robotlog.rlog",
    DATA / "wpilog" / "gen_wpilib_structs.wpilog",
    DATA / "carla" / "878-supp-mat_crash.log",
    DATA / "rosbag" / "test_none.bag",
]


@pytest.mark.parametrize("src", SAMPLES, ids=lambda p: p.name)
def test_every_format_says_what_the_command_says(src: Path, tmp_path: Path, logspec_bin: str):
    cut = tmp_path / f"cut_{src.name}"
    data = src.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    _, status, notes = dump_run(logspec_bin, cut)
    assert status == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(logspec.LogspecError) as info:
            for _ in logspec.open(cut):
                pass
    e = info.value
    assert [str(w.message) for w in caught] + [str(e)] == notes
    assert isinstance(e, logspec.DecodeError) and e.file == str(cut)
    assert e.offset is not None and f"byte {e.offset}" in str(e), str(e)


def test_format_and_filter_errors_are_structured(tmp_path: Path):
    need("pyarrow")  # log.tables
    p = tmp_path / "notes.txt"
    p.write_text("hello, not a log\n")
    with pytest.raises(logspec.FormatError) as info:
        logspec.open(p)
    assert info.value.file == str(p) and info.value.message == str(info.value)
    log = logspec.open(DATA / "usvlog" / "step.usvlog")
    for call in (lambda: list(log.records("REC_NOPE")), lambda: log.tables("REC_NOPE"),
                 lambda: list(log.records(since=1e6))):
        with pytest.raises(logspec.FilterError) as info:
            call()
        assert info.value.file == log.path and info.value.offset is None


def test_warnings_can_be_errors():
    # A bag without an index: the command notes it on stderr; the package warns, and a filter
    # that turns warnings into errors stops the loop there.
    bag = DATA / "rosbag" / "gen_roslz4_unindexed.bag"
    with pytest.warns(logspec.LogspecWarning, match="no index"):
        assert sum(1 for _ in logspec.open(bag)) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", logspec.LogspecWarning)
        with pytest.raises(logspec.LogspecWarning) as info:
            list(logspec.open(bag))
    assert info.value.file == str(bag) and isinstance(info.value, UserWarning)
    # A DataFusion query over the bag says the same, naming the log.
    ctx = need("datafusion").SessionContext()
    ctx.register_table("t", logspec.datafusion_table(bag, "/byte"))
    with pytest.warns(logspec.LogspecWarning, match="log=gen_roslz4_unindexed: .*no index"):
        assert ctx.sql("SELECT count(*) AS n FROM t").to_pylist()[0]["n"] > 0


def bag_index_pos(data: bytes) -> int:
    """The `index_pos` field of a bag's header record (ROS bag format 2.0: after the 13-byte
    magic line, a record is a u32 header length, fields `u32 len, name=value`, then its data)."""
    assert data[:13] == b"#ROSBAG V2.0\n"
    (header_len,) = struct.unpack_from("<I", data, 13)
    at, end = 17, 17 + header_len
    while at < end:
        (n,) = struct.unpack_from("<I", data, at)
        name, _, value = data[at + 4 : at + 4 + n].partition(b"=")
        if name == b"index_pos":
            return struct.unpack("<Q", value)[0]
        at += 4 + n
    raise AssertionError("no index_pos in the bag header")


@pytest.mark.parametrize("made", ["unindexed", "cut_before_index"])
def test_info_of_a_bag_without_its_index_warns_and_prints_nothing(made: str, tmp_path: Path, logspec_bin: str, capfd):
    # A bag whose index was never written (a killed recorder: index_pos 0) and one cut where its
    # index begins: `logspec info` notes on stderr that it scanned the file; the package says
    # the same as a LogspecWarning and prints nothing.
    if made == "unindexed":
        bag = DATA / "rosbag" / "test_unindexed.bag"
    else:
        data = (DATA / "rosbag" / "test_none.bag").read_bytes()
        index_pos = bag_index_pos(data)
        assert 0 < index_pos < len(data)
        bag = tmp_path / "cut_before_index.bag"
        bag.write_bytes(data[:index_pos])
    p = run(logspec_bin, "info", "--json", str(bag))
    assert p.returncode == 0, p.stderr
    notes = [line.removeprefix("logspec: ") for line in p.stderr.splitlines()]
    assert len(notes) == 1 and "scanned" in notes[0], notes
    capfd.readouterr()
    with pytest.warns(logspec.LogspecWarning) as caught:
        info = logspec.open(bag).info()
    assert info == json.loads(p.stdout) and info["indexed"] is False
    assert [str(w.message) for w in caught] == notes
    assert all(w.message.file == str(bag) and w.message.message == str(w.message) for w in caught)
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_a_truncated_bag_gives_its_complete_messages_then_raises(logspec_bin: str):
    # test_truncated.bag is cut inside its last chunk: its expected summary (the reference
    # scanner's) counts the messages of the complete chunks; every API gives those, then says
    # the file is cut, in the command's words.
    need("pyarrow")  # the tables
    bag = DATA / "rosbag" / "test_truncated.bag"
    summary = json.loads((DATA / "rosbag" / "test_truncated.expected.summary.json").read_text())
    assert summary["truncated"] is True
    _, status, notes = dump_run(logspec_bin, bag)
    assert status == 1 and "truncated" in notes[-1], notes
    log = logspec.open(bag)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", logspec.LogspecWarning)
        with pytest.raises(logspec.DecodeError) as raised:
            log.tables()
        assert str(raised.value) == notes[-1] and raised.value.offset is not None
        assert f"byte {raised.value.offset}" in notes[-1]
        tables = log.tables(on_error="warn")
        with pytest.raises(logspec.DecodeError) as raised:
            list(log)
        assert str(raised.value) == notes[-1]
        messages = [r for r in log.records(on_error="warn") if r["kind"] == "message"]
        info = log.info()
    assert {name: t.num_rows for name, t in tables.items()} == summary["topics"]
    assert len(messages) == sum(t.num_rows for t in tables.values()) == summary["messages"]
    assert info["truncated"] is True and info["messages"] == summary["messages"]


def _bag_record(fields: dict, data: bytes = b"") -> bytes:
    """A bag record (ROS bag format 2.0): u32 header length, `u32 len, name=value` fields, u32
    data length, data."""
    header = b"".join(struct.pack("<I", len(k) + 1 + len(v)) + k.encode() + b"=" + v for k, v in fields.items())
    return struct.pack("<I", len(header)) + header + struct.pack("<I", len(data)) + data


def test_a_chunk_over_the_chunk_budget_is_skipped_then_reported(tmp_path: Path, logspec_bin: str):
    # A bag without an index: a chunk of the connection (`uint8[] data` on /big), then a chunk
    # of 3 MiB of messages (1 KiB each), then a chunk of one more message. Under a budget of 1 MiB
    # the big chunk is refused by its header's size; the other message is read, then the refusal
    # is the error, in the command's words.
    need("pyarrow")  # the tables
    conn_data = b"".join(
        struct.pack("<I", len(k) + 1 + len(v)) + k + b"=" + v
        for k, v in [(b"topic", b"/big"), (b"type", b"pkg/Blob"), (b"md5sum", b"*"), (b"message_definition", b"uint8[] data")]
    )
    conn = _bag_record({"op": b"\x07", "conn": struct.pack("<I", 0), "topic": b"/big"}, conn_data)

    def message(sec: int) -> bytes:
        time = struct.pack("<II", sec, 0)
        payload = struct.pack("<I", 1024) + bytes([sec % 256]) * 1024
        return _bag_record({"op": b"\x02", "conn": struct.pack("<I", 0), "time": time}, payload)

    def chunk(records: bytes) -> bytes:
        return _bag_record({"op": b"\x05", "compression": b"none", "size": struct.pack("<I", len(records))}, records)

    header = _bag_record(
        {"op": b"\x03", "index_pos": struct.pack("<Q", 0), "conn_count": b"\0" * 4, "chunk_count": b"\0" * 4},
        b" " * 64,
    )
    big = b"".join(message(1 + i) for i in range(3 * 1024))
    bag = tmp_path / "big_chunk.bag"
    bag.write_bytes(b"#ROSBAG V2.0\n" + header + chunk(conn) + chunk(big) + chunk(message(5000)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", logspec.LogspecWarning)
        assert logspec.open(bag).tables()["/big"].num_rows == 3 * 1024 + 1
        small = logspec.open(bag, chunk_budget=1)
        with pytest.raises(logspec.DecodeError, match="more than the chunk budget of 1048576 bytes") as raised:
            small.tables()
        assert small.tables(on_error="warn")["/big"].num_rows == 1
    _, status, notes = dump_run(logspec_bin, bag, "--chunk-budget", "1")
    assert status == 1 and str(raised.value) == notes[-1], notes
    with pytest.raises(ValueError, match="chunk_budget"):
        logspec.open(bag, chunk_budget=0)
