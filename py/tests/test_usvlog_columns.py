"""USVLOG columns on files of many rows: `read_timeseries_bin` and `.tables()` against Python's
`struct`, the independent reference, on a file written here byte by byte (the upstream reader's
formats, `<6sIBQ13x` header, `<QHH` record headers), with more rows per record type than the
reader's blocks hold, interleaved at random; a cut file keeps exactly its complete records; each
table of `.tables()` is one batch, so that its columns become numpy arrays without a copy; the
number of threads that fill the arrays (parts of the file cut at record boundaries) changes
neither the arrays nor the errors.
"""

import random
from pathlib import Path
import re
import struct

import pytest

import logspec
from conftest import need
from logspec.usvlog import TimeseriesReadError, read_timeseries_bin

# type id -> (name, payload format, field names), as usv-autopilot's layout table has them.
LAYOUT = {
    1: ("REC_NAV_SOLUTION", "<6f", ("x", "y", "psi", "v", "r", "b_g")),
    6: ("REC_MISSION_STATE", "<HBB4x6f", ("idx", "active", "done", "x0", "y0", "x1", "y1", "v_seg", "d_wp")),
    11: ("REC_EKF_DIAG", "<6fI", ("P_xx", "P_yy", "P_psi", "P_v", "P_r", "P_bg", "status_flags")),
    13: ("REC_SENSOR_GYRO", "<2fB3x", ("z_gyro", "b_g_est", "valid")),
}
COUNTS = {1: 2500, 6: 7, 11: 1100, 13: 3001}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def values(rng, fmt):
    out = []
    for count, code in re.findall(r"(\d*)([a-zA-Z])", fmt):
        if code == "x":
            continue
        for _ in range(int(count or 1)):
            out.append(value(rng, code))
    return out


def value(rng, code):
    if code == "f":
        return f32(rng.uniform(-1e6, 1e6))
    return rng.randrange(1 << (8 * struct.calcsize("<" + code)))


def build(seed=7):
    """The file's bytes, the records' offsets, and per record (type id, t_us, values)."""
    rng = random.Random(seed)
    order = [t for t, n in COUNTS.items() for _ in range(n)]
    rng.shuffle(order)
    data = bytearray(struct.pack("<6sIBQ13x", b"USVLOG", 1, 1, 123))
    offsets, records = [], []
    for i, tid in enumerate(order):
        _, fmt, _ = LAYOUT[tid]
        vals = values(rng, fmt)
        t_us = 1000 * i + rng.randrange(1000)
        offsets.append(len(data))
        data += struct.pack("<QHH", t_us, tid, struct.calcsize(fmt)) + struct.pack(fmt, *vals)
        records.append((tid, t_us, vals))
    return bytes(data), offsets, records


def columns(records):
    """Upstream's result: per record name in order of first appearance, `t_us`, then the fields."""
    out = {}
    for tid, t_us, vals in records:
        name, _, fields = LAYOUT[tid]
        cols = out.setdefault(name, {"t_us": [], **{f: [] for f in fields}})
        cols["t_us"].append(t_us)
        for f, v in zip(fields, vals):
            cols[f].append(v)
    return out


def test_many_rows_equal_struct(tmp_path):
    np = need("numpy")
    data, _, records = build()
    p = tmp_path / "many.bin"
    p.write_bytes(data)
    want = columns(records)
    got = read_timeseries_bin(p)
    assert list(got.records) == list(want)
    for name, cols in want.items():
        assert list(got.records[name]) == list(cols)
        for field, vals in cols.items():
            arr = got.records[name][field]
            assert arr.dtype == (np.uint64 if field == "t_us" else np.int64 if isinstance(vals[0], int) else np.float64)
            assert arr.tolist() == vals, (name, field)
    assert got.record_counts == {name: len(c["t_us"]) for name, c in want.items()}


def test_tables_are_one_batch_viewed_by_numpy(tmp_path):
    need("numpy")  # Log.numpy
    need("pyarrow")  # the tables
    data, _, records = build()
    p = tmp_path / "many.bin"
    p.write_bytes(data)
    want = columns(records)
    tables = logspec.open(p).tables()
    assert list(tables) == list(want)
    for name, cols in want.items():
        t = tables[name]
        assert t.num_rows == len(cols["t_us"])
        for field, vals in cols.items():
            col = t.column("log_time" if field == "t_us" else field)
            assert col.num_chunks == 1, (name, field)
            # One chunk without nulls: numpy views the Arrow buffer (this raises if it must copy).
            arr = col.chunk(0).to_numpy(zero_copy_only=True)
            if field == "t_us":
                assert arr.astype("int64").tolist() == [t * 1000 for t in vals]
            else:
                assert arr.tolist() == vals, (name, field)
    # numpy() gives the same arrays.
    nav = logspec.open(p).numpy("REC_NAV_SOLUTION")
    assert nav["x"].tolist() == want["REC_NAV_SOLUTION"]["x"]


@pytest.mark.parametrize("cut_record", [0, 1, 1500, 5000, 6607])
def test_cut_files_keep_exactly_the_complete_records(tmp_path, cut_record):
    need("numpy")  # read_timeseries_bin's arrays
    need("pyarrow")  # the tables
    data, offsets, records = build()
    off = offsets[cut_record]
    p = tmp_path / "cut.bin"
    p.write_bytes(data[: off + 15])  # inside the payload of record `cut_record`
    want = columns(records[:cut_record])
    with pytest.raises(TimeseriesReadError) as e:
        read_timeseries_bin(p)
    assert (e.value.offset, e.value.record_index) == (off, cut_record)
    partial = e.value.partial
    assert {n: {f: a.tolist() for f, a in c.items()} for n, c in partial.records.items()} == want
    # The tables keep the same rows, with a warning instead of the error when asked.
    with pytest.warns(logspec.LogspecWarning):
        tables = logspec.open(p).tables(on_error="warn")
    assert {n: t.num_rows for n, t in tables.items()} == {n: len(c["t_us"]) for n, c in want.items()}
    for name, cols in want.items():
        for field, vals in cols.items():
            if field != "t_us":
                assert tables[name].column(field).to_pylist() == vals


def as_lists(data):
    return {n: {f: (a.dtype.str, a.tolist()) for f, a in c.items()} for n, c in data.records.items()}


@pytest.mark.parametrize("threads", [2, 3, 7, 64, 1000])
def test_threads_change_nothing(tmp_path, threads):
    need("numpy")  # read_timeseries_bin's arrays
    data, _, records = build()
    # An unknown record and a record of every type between parts, so that every part has rows.
    data += struct.pack("<QHH", 9_999_999, 200, 3) + b"abc"
    p = tmp_path / "many.bin"
    p.write_bytes(data)
    one = read_timeseries_bin(p, threads=1)
    got = read_timeseries_bin(p, threads=threads)
    assert as_lists(got) == as_lists(one)
    assert list(got.records) == list(one.records)
    assert got.record_counts == one.record_counts
    assert got.unknown_records == one.unknown_records
    assert got.header == one.header
    want = columns(records)
    assert {n: {f: a.tolist() for f, a in c.items()} for n, c in got.records.items()} == want


@pytest.mark.parametrize("cut_record", [0, 1, 1500, 5000, 6607])
def test_cut_files_give_the_same_error_and_rows_on_threads(tmp_path, cut_record):
    need("numpy")  # read_timeseries_bin's arrays
    data, offsets, records = build()
    off = offsets[cut_record]
    p = tmp_path / "cut.bin"
    p.write_bytes(data[: off + 15])
    errors = []
    for threads in (1, 2, 5):
        with pytest.raises(TimeseriesReadError) as e:
            read_timeseries_bin(p, threads=threads)
        errors.append(e.value)
    for e in errors:
        assert (e.offset, e.record_index, e.type_id, e.record_name, str(e)) == (
            errors[0].offset, errors[0].record_index, errors[0].type_id, errors[0].record_name, str(errors[0]))
        assert as_lists(e.partial) == as_lists(errors[0].partial)
    assert {n: {f: a.tolist() for f, a in c.items()} for n, c in errors[0].partial.records.items()} == columns(
        records[:cut_record])


def test_a_bad_payload_length_gives_the_same_error_on_threads(tmp_path):
    need("numpy")  # read_timeseries_bin's arrays
    data, offsets, records = build()
    # Record 4000 claims one byte more than its type's size (the next record's first byte).
    off = offsets[4000]
    (length,) = struct.unpack_from("<H", data, off + 10)
    bad = bytearray(data[: offsets[4001] + 1])
    struct.pack_into("<H", bad, off + 10, length + 1)
    p = tmp_path / "bad.bin"
    p.write_bytes(bytes(bad))
    for threads in (1, 3):
        with pytest.raises(TimeseriesReadError, match="payload length") as e:
            read_timeseries_bin(p, threads=threads)
        assert (e.value.offset, e.value.record_index) == (off, 4000)
        assert {n: {f: a.tolist() for f, a in c.items()} for n, c in e.value.partial.records.items()} == columns(
            records[:4000])


@pytest.mark.parametrize("threads", [0, -1, 1.5, True, "2"])
def test_threads_must_be_a_positive_int(threads):
    with pytest.raises(ValueError, match="threads"):
        read_timeseries_bin(Path(__file__), threads=threads)


def build_big(seed=11, n=30000, big_every=2500):
    """A file of about 1.5 MB: more than the reader's chunks (256 KiB), so that records and record
    headers are cut by chunk ends, with an unknown record of 65,535 bytes (longer than the bytes
    the reader keeps in front of a chunk) every `big_every` records."""
    rng = random.Random(seed)
    data = bytearray(struct.pack("<6sIBQ13x", b"USVLOG", 1, 1, 5))
    offsets, records = [], []
    types = list(LAYOUT)
    for i in range(n):
        offsets.append(len(data))
        if i % big_every == big_every - 1:
            payload = bytes(rng.randrange(256) for _ in range(16)) * 4096
            data += struct.pack("<QHH", i, 300, 65535) + payload[:65535]
            records.append(None)
            continue
        tid = rng.choice(types)
        _, fmt, _ = LAYOUT[tid]
        vals = values(rng, fmt)
        data += struct.pack("<QHH", i, tid, struct.calcsize(fmt)) + struct.pack(fmt, *vals)
        records.append((tid, i, vals))
    return bytes(data), offsets, records


def test_records_across_chunk_ends(tmp_path):
    need("numpy")  # read_timeseries_bin's arrays
    data, offsets, records = build_big()
    p = tmp_path / "big.bin"
    p.write_bytes(data)
    want = columns([r for r in records if r is not None])
    for threads in (1, 2, 3):
        got = read_timeseries_bin(p, threads=threads)
        assert {n: {f: a.tolist() for f, a in c.items()} for n, c in got.records.items()} == want, threads
        assert [(u.t_us, u.type_id, u.payload_len) for u in got.unknown_records] == [
            (offsets.index(o), 300, 65535) for o, r in zip(offsets, records) if r is None]


def test_cuts_across_chunk_ends(tmp_path):
    need("numpy")  # read_timeseries_bin's arrays
    data, offsets, records = build_big()
    chunk = 256 << 10
    # Cuts in record headers and payloads near each chunk end, and inside the big records.
    cuts = set()
    for k in range(1, len(data) // chunk + 1):
        i = next((j for j, o in enumerate(offsets) if o > k * chunk), len(offsets)) - 1
        cuts |= {(i, 3), (i, 12 + 2)} | ({(i + 1, 0)} if i + 1 < len(offsets) else set())
    cuts |= {(j, 40000) for j, r in enumerate(records) if r is None}
    for i, into in sorted(cuts):
        p = tmp_path / "cut.bin"
        p.write_bytes(data[: offsets[i] + into])
        want = columns([r for r in records[:i] if r is not None])
        for threads in (1, 2):
            if into == 0:
                # A cut between records: a file of complete records.
                got = read_timeseries_bin(p, threads=threads)
            else:
                with pytest.raises(TimeseriesReadError, match="truncated") as e:
                    read_timeseries_bin(p, threads=threads)
                assert (e.value.offset, e.value.record_index) == (offsets[i], i), (i, into, threads)
                got = e.value.partial
            assert {n: {f: a.tolist() for f, a in c.items()} for n, c in got.records.items()} == want, (i, into)


@pytest.mark.parametrize(
    "channels, since, until",
    [(["REC_NAV*", "REC_SENSOR_GYRO"], 1.5, 4.25), (None, 2.0, None), (["REC_EKF_DIAG"], None, 3.0), (None, None, None)],
)
def test_filtered_tables_equal_struct(tmp_path, channels, since, until):
    need("numpy")  # Log.numpy
    need("pyarrow")  # the tables
    # tables() of a USVLOG file counts the rows first, then fills the arrays in place: with the
    # channel and time filters applied in both passes, the rows are those the filters keep.
    data, _, records = build()
    p = tmp_path / "many.bin"
    p.write_bytes(data)
    names = {LAYOUT[tid][0] for tid in LAYOUT}
    keep_name = (lambda n: True) if channels is None else (
        lambda n: any(n.startswith(c[:-1]) if c.endswith("*") else n == c for c in channels))
    kept = [(tid, t, v) for tid, t, v in records
            if keep_name(LAYOUT[tid][0]) and (since is None or t / 1e6 >= since) and (until is None or t / 1e6 <= until)]
    want = columns(kept)
    tables = logspec.open(p).tables(channels, since=since, until=until)
    assert list(tables) == list(want) and set(want) <= names
    for name, cols in want.items():
        t = tables[name]
        assert t.column("log_elapsed_ns").to_pylist() == [x * 1000 for x in cols["t_us"]]
        for field, vals in cols.items():
            if field != "t_us":
                assert t.column(field).to_pylist() == vals, (name, field)
    one = logspec.open(p).numpy("REC_SENSOR_GYRO", since=since, until=until)
    if "REC_SENSOR_GYRO" in want:
        assert one["z_gyro"].tolist() == want["REC_SENSOR_GYRO"]["z_gyro"]


def test_tables_skip_a_record_that_does_not_decode_with_a_warning(tmp_path):
    need("pyarrow")  # the tables
    # A known record whose payload is not its type's size: tables() warns and skips it, as the
    # command does (that file is read through the sample source, not the two passes).
    data, offsets, records = build()
    off = offsets[4000]
    tid = records[4000][0]
    bad = bytearray(data[:off]) + struct.pack("<QHH", 1, tid, 3) + b"abc" + data[off:]
    p = tmp_path / "bad.bin"
    p.write_bytes(bytes(bad))
    with pytest.warns(logspec.LogspecWarning, match="skipped"):
        tables = logspec.open(p).tables()
    want = columns(records)
    assert {n: t.num_rows for n, t in tables.items()} == {n: len(c["t_us"]) for n, c in want.items()}
    name = LAYOUT[tid][0]
    field = LAYOUT[tid][2][0]
    assert tables[name].column(field).to_pylist() == want[name][field]
