"""`logspec.usvlog.read_timeseries_bin` against usv-autopilot's reader.

The reference is the expected output in `tests/data/usvlog/`, which came from usv-autopilot's
`tools/log_io/io.py` `read_timeseries_bin` (values checked against its arrays; see that folder's
EXPECTED-FORMAT.md): the arrays must hold the same values, with the dtypes that reader makes
(`t_us` `uint64` by its explicit dtype, float fields `float64` and integer fields `int64` by
`np.asarray` of Python numbers), under the same names and in the same order, with the same
counts and unknown records. Bad input raises a `ValueError` that says where.
"""

import json
import struct
from pathlib import Path

import pytest

import logspec
from conftest import need
from logspec.usvlog import TimeseriesReadError, UnknownRecord, read_timeseries_bin

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "usvlog"
FILES = sorted(DATA.glob("*.usvlog"))


def expected(stem):
    """Upstream's result, rebuilt from the expected JSON Lines: per record name in order of first
    appearance, `t_us` then each field in layout order, values in file order."""
    records = {}
    with open(DATA / f"{stem}.expected.jsonl") as f:
        for line in f:
            rec = json.loads(line)
            if rec["name"] is None:
                continue
            cols = records.setdefault(rec["name"], {"t_us": [], **{k: [] for k in rec["fields"]}})
            cols["t_us"].append(rec["t_us"])
            for k, v in rec["fields"].items():
                cols[k].append(v)
    summary = json.loads((DATA / f"{stem}.expected.summary.json").read_text())
    return records, summary


def test_there_are_bundled_files():
    assert FILES, f"no USVLOG files in {DATA}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_same_arrays_as_the_upstream_reader(path):
    np = need("numpy")  # read_timeseries_bin's arrays
    want, summary = expected(path.stem)
    got = read_timeseries_bin(path)
    assert summary["ok"]
    h = summary["header"]
    assert (got.header.magic, got.header.fw_model_schema, got.header.endianness, got.header.t0_us) == (
        h["magic"], h["fw_model_schema"], h["endianness"], h["t0_us"])
    # Names and fields in upstream's order (dict insertion: first appearance, then layout order).
    assert list(got.records) == list(want)
    for name, cols in want.items():
        assert list(got.records[name]) == list(cols), name
        for field, values in cols.items():
            arr = got.records[name][field]
            if field == "t_us":
                assert arr.dtype == np.uint64
            elif all(isinstance(v, int) for v in values):
                assert arr.dtype == np.int64, (name, field)
            else:
                assert arr.dtype == np.float64, (name, field)
            assert arr.tolist() == values, (name, field)
    assert got.record_counts == summary["record_counts"]
    assert list(got.record_counts) == list(want)
    assert sum(got.record_counts.values()) == summary["records_total"]
    assert got.unknown_records == tuple(
        UnknownRecord(t_us=u["t_us"], type_id=u["type"], payload_len=u["len"]) for u in summary["unknown_records"])


def test_the_result_is_upstreams_shape():
    np = need("numpy")  # read_timeseries_bin's arrays
    got = read_timeseries_bin(str(FILES[0]))
    assert isinstance(got, logspec.usvlog.TimeseriesData)
    with pytest.raises(Exception):
        got.record_counts = {}  # frozen, as upstream's
    # Upstream's arrays are writable numpy arrays that own (or share) nothing of the file.
    arr = got.records["REC_NAV_SOLUTION"]["x"]
    assert isinstance(arr, np.ndarray) and arr.flags.writeable
    arr[0] = 42.0
    assert read_timeseries_bin(FILES[0]).records["REC_NAV_SOLUTION"]["x"][0] == 0.0


def test_record_layouts_are_refused_not_ignored():
    with pytest.raises(NotImplementedError, match="record_layouts"):
        read_timeseries_bin(FILES[0], record_layouts={})


def header(t0=0, schema=1, magic=b"USVLOG", endian=1):
    return struct.pack("<6sIBQ13x", magic, schema, endian, t0)


def record(t, type_id, payload):
    return struct.pack("<QHH", t, type_id, len(payload)) + payload


GYRO = struct.pack("<2fB3x", 0.5, 0.25, 1)  # REC_SENSOR_GYRO (13), from the spec's table


def test_unknown_records_are_skipped_and_reported(tmp_path):
    need("numpy")  # read_timeseries_bin's arrays
    p = tmp_path / "u.bin"
    p.write_bytes(header() + record(1, 13, GYRO) + record(2, 200, b"\xde\xad\xbe") + record(3, 13, GYRO))
    got = read_timeseries_bin(p)
    assert got.record_counts == {"REC_SENSOR_GYRO": 2}
    assert got.records["REC_SENSOR_GYRO"]["t_us"].tolist() == [1, 3]
    assert got.unknown_records == (UnknownRecord(t_us=2, type_id=200, payload_len=3),)
    assert read_timeseries_bin(p, keep_unknown=False).unknown_records == ()


def test_a_truncated_file_raises_with_the_offset_and_keeps_the_complete_records(tmp_path):
    need("numpy")  # read_timeseries_bin's arrays
    src = FILES[0].read_bytes()
    want, _ = expected(FILES[0].stem)
    # Cut 5 bytes into the payload of record #100: records 0..99 are complete.
    off = 32
    for _ in range(100):
        off += 12 + struct.unpack_from("<H", src, off + 10)[0]
    p = tmp_path / "cut.bin"
    p.write_bytes(src[: off + 12 + 5])
    with pytest.raises(TimeseriesReadError) as e:
        read_timeseries_bin(p)
    err = e.value
    assert isinstance(err, ValueError)
    assert (err.offset, err.record_index) == (off, 100)
    assert f"at byte {off}" in str(err) and str(p) in str(err)
    assert sum(err.partial.record_counts.values()) == 100
    # The partial columns are the first rows of the full ones.
    for name, cols in err.partial.records.items():
        for field, arr in cols.items():
            assert arr.tolist() == want[name][field][: len(arr)]
    # Cut inside a record header.
    p.write_bytes(src[: off + 7])
    with pytest.raises(TimeseriesReadError, match="record header") as e:
        read_timeseries_bin(p)
    assert (e.value.offset, e.value.record_index) == (off, 100)


def test_bad_headers_raise_value_errors(tmp_path):
    p = tmp_path / "h.bin"
    for data, match in [
        (b"USVLO", "file header"),
        (header(magic=b"NOTUSV"), "magic"),
        (header(endian=2), "endianness"),
        (header(schema=7), "fw_model_schema is 7"),
    ]:
        p.write_bytes(data + record(0, 13, GYRO))
        with pytest.raises(TimeseriesReadError, match=match) as e:
            read_timeseries_bin(p)
        assert e.value.offset == 0 and e.value.record_index is None and e.value.partial is None
    with pytest.raises(FileNotFoundError):
        read_timeseries_bin(tmp_path / "missing.bin")


def test_payload_lengths(tmp_path):
    need("numpy")  # read_timeseries_bin's arrays
    p = tmp_path / "len.bin"
    # A known record one byte too long: an error when strict (upstream's default), decoded from
    # its start when not.
    p.write_bytes(header() + record(1, 13, GYRO) + record(2, 13, GYRO + b"\x00") + record(3, 13, GYRO))
    with pytest.raises(TimeseriesReadError, match="payload length 13, expected exactly 12") as e:
        read_timeseries_bin(p)
    assert (e.value.offset, e.value.record_index, e.value.type_id, e.value.record_name) == (
        32 + 24, 1, 13, "REC_SENSOR_GYRO")
    # It is a logspec.DecodeError too, with that class's attributes.
    assert isinstance(e.value, logspec.DecodeError) and isinstance(e.value, logspec.LogspecError)
    assert (e.value.file, e.value.offset, e.value.record) == (str(p), 32 + 24, 1)
    assert e.value.message == str(e.value) and e.value.field is None
    assert e.value.partial.record_counts == {"REC_SENSOR_GYRO": 1}
    got = read_timeseries_bin(p, strict_payload_len=False)
    assert got.records["REC_SENSOR_GYRO"]["t_us"].tolist() == [1, 2, 3]
    assert got.records["REC_SENSOR_GYRO"]["z_gyro"].tolist() == [0.5, 0.5, 0.5]
    # Too short is an error either way.
    p.write_bytes(header() + record(1, 13, GYRO[:11]))
    with pytest.raises(TimeseriesReadError, match="expected at least 12"):
        read_timeseries_bin(p, strict_payload_len=False)


def test_an_empty_log(tmp_path):
    need("numpy")  # read_timeseries_bin's arrays
    p = tmp_path / "empty.bin"
    p.write_bytes(header(t0=123))
    got = read_timeseries_bin(p)
    assert got.records == {} and got.record_counts == {} and got.unknown_records == ()
    assert got.header.t0_us == 123


@pytest.mark.parametrize("seed", range(20))
def test_corrupted_files_raise_or_read_never_crash(tmp_path, seed):
    np = need("numpy")
    rng = np.random.default_rng(seed)
    data = bytearray(FILES[0].read_bytes()[:4000])
    for i in rng.integers(0, len(data), size=8):
        data[i] = int(rng.integers(0, 256))
    p = tmp_path / "c.bin"
    p.write_bytes(bytes(data[: int(rng.integers(0, len(data)))]))
    try:
        got = read_timeseries_bin(p)
    except TimeseriesReadError as e:
        assert e.offset <= p.stat().st_size
    else:
        assert sum(got.record_counts.values()) <= p.stat().st_size // 12
