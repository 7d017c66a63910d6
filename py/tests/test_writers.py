"""The package's writers, each read back by a reader that is not logspec's Python path.

- USVLOG: Python `struct` with the formats of the spec's table (specs/usvlog.md), and the bundled
  file made by usv-autopilot's own generator rebuilt byte for byte from its expected values.
- RLOG: the `logspec` command's `dump` (the Rust reader), and Python `struct` following the RLOG
  spec for a few messages.
- WPILOG: WPILib's own reader (robotpy-wpiutil's `DataLogReader`).
"""

import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import logspec

from conftest import need

ROOT = Path(__file__).resolve().parents[2]
USV = ROOT / "tests" / "data" / "usvlog"

# specs/usvlog.md, "Record types": id -> (name, payload struct format, field names).
SPEC = {
    1: ("REC_NAV_SOLUTION", "<6f", ["x", "y", "psi", "v", "r", "b_g"]),
    3: ("REC_ACTUATOR_REQ", "<2fB3x", ["u_s_req", "u_d_req", "src"]),
    6: ("REC_MISSION_STATE", "<HBB4x6f", ["idx", "active", "done", "x0", "y0", "x1", "y1", "v_seg", "d_wp"]),
    11: ("REC_EKF_DIAG", "<6fI", ["P_xx", "P_yy", "P_psi", "P_v", "P_r", "P_bg", "status_flags"]),
    13: ("REC_SENSOR_GYRO", "<2fB3x", ["z_gyro", "b_g_est", "valid"]),
}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def struct_records(data):
    """Every record of a USVLOG file, by the spec: (t_us, type, payload values or raw bytes)."""
    magic, schema, endian, t0 = struct.unpack_from("<6sIBQ13x", data, 0)
    assert (magic, endian) == (b"USVLOG", 1)
    off, out = 32, []
    while off < len(data):
        t, typ, ln = struct.unpack_from("<QHH", data, off)
        payload = data[off + 12: off + 12 + ln]
        assert len(payload) == ln
        if typ in SPEC:
            out.append((t, typ, dict(zip(SPEC[typ][2], struct.unpack(SPEC[typ][1], payload)))))
        else:
            out.append((t, typ, payload))
        off += 12 + ln
    return (schema, t0), out


# ----------------------------------------------------------------------------------------------
# USVLOG


def test_usvlog_written_records_read_back_by_struct(tmp_path):
    np = need("numpy")  # numpy scalars as values
    p = tmp_path / "timeseries.bin"
    with logspec.usvlog.Writer(p, t0_us=7) as w:
        w.write("REC_SENSOR_GYRO", 1000, z_gyro=0.1, b_g_est=-2.5, valid=1)
        w.write("REC_NAV_SOLUTION", 1000, {"x": 1, "y": 2.5, "psi": -0.5, "v": 3.0, "r": 0.0, "b_g": 1e-3})
        w.write(3, 2000, {"u_s_req": 0.5, "u_d_req": -0.5}, src="MANUAL")  # by id; enum by name
        w.write("REC_MISSION_STATE", 3000, idx=65535, active=True, done=0, x0=0, y0=0, x1=1, y1=1, v_seg=1, d_wp=2)
        w.write("REC_EKF_DIAG", 4000, P_xx=np.float32(0.2), P_yy=np.float64(0.2), P_psi=0.1, P_v=0.1, P_r=0.1,
                P_bg=0.1, status_flags=np.uint32(4294967295))
        w.write_raw(200, 5000, b"\xde\xad")
    (schema, t0), recs = struct_records(p.read_bytes())
    assert (schema, t0) == (1, 7)
    assert recs[0] == (1000, 13, {"z_gyro": f32(0.1), "b_g_est": -2.5, "valid": 1})
    assert recs[1] == (1000, 1, {"x": 1.0, "y": 2.5, "psi": -0.5, "v": 3.0, "r": 0.0, "b_g": f32(1e-3)})
    assert recs[2] == (2000, 3, {"u_s_req": 0.5, "u_d_req": -0.5, "src": 1})
    assert recs[3][2]["idx"] == 65535 and recs[3][2]["active"] == 1
    assert recs[4][2]["status_flags"] == 4294967295 and recs[4][2]["P_xx"] == f32(0.2)
    assert recs[5] == (5000, 200, b"\xde\xad")
    # Pad bytes are zero (the spec's "written as zero").
    data = p.read_bytes()
    gyro = data[32 + 12: 32 + 12 + 12]
    assert gyro[9:] == b"\0\0\0"


def test_usvlog_rebuilds_the_upstream_generators_file_byte_for_byte(tmp_path):
    """`step.usvlog` was written by usv-autopilot's generate_dummy_logs.py; writing its expected
    values (which came from usv-autopilot's reader) gives the same bytes."""
    p = tmp_path / "step.bin"
    with logspec.usvlog.Writer(p) as w:
        for line in open(USV / "step.expected.jsonl"):
            rec = json.loads(line)
            w.write(rec["name"], rec["t_us"], rec["fields"])
    assert p.read_bytes() == (USV / "step.usvlog").read_bytes()


def test_usvlog_round_trip_through_read_timeseries_bin(tmp_path):
    np = need("numpy")
    p = tmp_path / "rt.bin"
    xs = np.linspace(-1, 1, 50)
    with logspec.usvlog.Writer(p) as w:
        for i, x in enumerate(xs):
            w.write("REC_SENSOR_GYRO", i * 50_000, z_gyro=x, b_g_est=0.0, valid=i % 2)
    got = logspec.usvlog.read_timeseries_bin(p)
    g = got.records["REC_SENSOR_GYRO"]
    assert g["t_us"].tolist() == [i * 50_000 for i in range(50)]
    assert g["z_gyro"].tolist() == xs.astype(np.float32).astype(np.float64).tolist()
    assert g["valid"].tolist() == [i % 2 for i in range(50)]


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda w: w.write("REC_SENSOR_GYRO", 0, z_gyro=1.0, valid=1), ValueError,
         "REC_SENSOR_GYRO: field `b_g_est`: missing"),
        (lambda w: w.write("REC_SENSOR_GYRO", 0, z_gyro="fast", b_g_est=0, valid=1), TypeError,
         "REC_SENSOR_GYRO: field `z_gyro`: expected a number \\(f32\\), found a string"),
        (lambda w: w.write("REC_SENSOR_GYRO", 0, z_gyro=0, b_g_est=0, valid=300), ValueError,
         "field `valid`: 300 is out of range for u8 \\(0..=255\\)"),
        (lambda w: w.write("REC_SENSOR_GYRO", 0, z_gyro=1e39, b_g_est=0, valid=1), ValueError,
         "field `z_gyro`: 1e39 is out of range for f32"),
        (lambda w: w.write("REC_SENSOR_GYRO", 0, z_gyro=0, b_g_est=0, valid=1.0), TypeError,
         "field `valid`: expected an integer \\(u8\\), found a float"),
        (lambda w: w.write("REC_SENSOR_GYRO", 0, z_gyro=0, b_g_est=0, valid=1, speed=2), ValueError,
         "field `speed`: no such field; the fields are z_gyro, b_g_est, valid"),
        (lambda w: w.write("REC_ACTUATOR_REQ", 0, u_s_req=0, u_d_req=0, src="AUTO"), ValueError,
         "`AUTO` is not a value of ActSrc; its values are AUTOPILOT, MANUAL, TEST"),
        (lambda w: w.write("REC_IMU", 0, ax=1), ValueError, "'REC_IMU' is not a record type of usvlog"),
        (lambda w: w.write(99, 0, ax=1), ValueError, "99 is not a record type"),
        (lambda w: w.write("REC_SENSOR_GYRO", -1, z_gyro=0, b_g_est=0, valid=1), ValueError,
         "REC_SENSOR_GYRO: t_us: -1 is out of range for u64"),
        (lambda w: w.write("REC_SENSOR_GYRO", 0, {"valid": 1}, valid=1, z_gyro=0, b_g_est=0), TypeError,
         "given twice"),
        (lambda w: w.write_raw(70000, 0, b""), ValueError, "does not fit"),
    ],
)
def test_usvlog_writer_errors_name_record_and_field(tmp_path, call, exc, match):
    p = tmp_path / "e.bin"
    with logspec.usvlog.Writer(p) as w:
        w.write("REC_SENSOR_GYRO", 0, z_gyro=0.5, b_g_est=0, valid=1)
        with pytest.raises(exc, match=match):
            call(w)
        w.write("REC_SENSOR_GYRO", 1, z_gyro=0.5, b_g_est=0, valid=1)
    # A refused record writes nothing: the two good ones are the whole file.
    _, recs = struct_records(p.read_bytes())
    assert [r[0] for r in recs] == [0, 1]


def test_writers_never_overwrite_unless_asked(tmp_path):
    p = tmp_path / "keep.bin"
    p.write_bytes(b"precious")
    for make in (lambda **k: logspec.usvlog.Writer(p, **k), lambda **k: logspec.rlog.Writer(p, **k),
                 lambda **k: logspec.wpilog.Writer(p, **k)):
        with pytest.raises(FileExistsError, match="overwrite=True"):
            make()
        assert p.read_bytes() == b"precious"
    with logspec.usvlog.Writer(p, overwrite=True) as w:
        w.write("REC_SENSOR_GYRO", 0, z_gyro=0, b_g_est=0, valid=1)
    assert p.read_bytes()[:6] == b"USVLOG"
    with pytest.raises(FileNotFoundError):
        logspec.usvlog.Writer(tmp_path / "no" / "such" / "dir.bin")


def test_exit_flushes_even_when_the_block_raises(tmp_path):
    p = tmp_path / "x.bin"
    with pytest.raises(RuntimeError):
        with logspec.usvlog.Writer(p) as w:
            for i in range(10):
                w.write("REC_SENSOR_GYRO", i, z_gyro=i, b_g_est=0, valid=1)
            raise RuntimeError("generator failed")
    assert w.closed
    _, recs = struct_records(p.read_bytes())
    assert [r[0] for r in recs] == list(range(10))
    with pytest.raises(ValueError, match="closed"):
        w.write("REC_SENSOR_GYRO", 11, z_gyro=0, b_g_est=0, valid=1)
    w.close()  # closing twice is allowed


# ----------------------------------------------------------------------------------------------
# RLOG


def logspec_command():
    """The `logspec` binary of this checkout (`cargo build` makes it); `LOGSPEC_BIN` overrides."""
    env = os.environ.get("LOGSPEC_BIN")
    candidates = [Path(env)] if env else [ROOT / "target" / "debug" / "logspec", ROOT / "target" / "release" / "logspec"]
    found = [c for c in candidates if c.exists()] or ([Path(shutil.which("logspec"))] if shutil.which("logspec") else [])
    if not found:
        if os.environ.get("CI") == "true":
            pytest.fail("the logspec command is not built (cargo build), and CI must check this")
        pytest.skip("the logspec command is not built (cargo build)")
    return str(max(found, key=lambda c: c.stat().st_mtime))


def dump(path):
    out = subprocess.run([logspec_command(), "dump", str(path)], check=True, capture_output=True, text=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_rlog_r2_read_back_by_logspec_dump(tmp_path):
    np = need("numpy")  # a numpy array as a value
    p = tmp_path / "r2.rlog"
    pose = struct.pack("<3d", 1.0, -2.0, 0.5)  # WPILib struct bytes stay little-endian
    with logspec.rlog.Writer(p) as w:
        assert w.revision == 2
        w.cycle(0.02, {"/Double": 1.5, "/Int": -(2**63), "/Bool": True, "/Str": "ü", "/Raw": b"\x01\x02",
                       "/DoubleArr": [1, 2.5], "/IntArr": np.array([1, -1]), "/StrArr": ["a", "", "ü1"],
                       "/BoolArr": [True, False]})
        w.cycle(0.04, {"/Pose": pose, "/Float": 0.1, "/Json": '{"a": 1}', "/Double": float("nan")},
                types={"/Pose": "struct:Pose2d", "/Float": "float", "/Json": "json"})
        w.cycle(0.06, {})
    rows = dump(p)
    got = {(r["t"], r["key"]): (r["type"], r["value"]) for r in rows}
    assert got[(0.02, "/Double")] == ("double", 1.5)
    assert got[(0.02, "/Int")] == ("int64", -(2**63))
    assert got[(0.02, "/Bool")] == ("boolean", True)
    assert got[(0.02, "/Str")] == ("string", "ü")
    assert got[(0.02, "/Raw")] == ("raw", "0102")
    assert got[(0.02, "/DoubleArr")] == ("double[]", [1.0, 2.5])
    assert got[(0.02, "/IntArr")] == ("int64[]", [1, -1])
    assert got[(0.02, "/StrArr")] == ("string[]", ["a", "", "ü1"])
    assert got[(0.02, "/BoolArr")] == ("boolean[]", [True, False])
    assert got[(0.04, "/Pose")][0] == "struct:Pose2d"
    assert got[(0.04, "/Float")] == ("float", f32(0.1))
    assert got[(0.04, "/Json")] == ("json", '{"a": 1}')
    assert got[(0.04, "/Double")] == ("double", "NaN")
    assert len(rows) == 13


def test_rlog_bytes_follow_the_spec(tmp_path):
    """specs/rlog.md §2 and §4: revision, then `00 ts:f64`, `01 id:i16 len:u16 key len:u16 type`,
    `02 id:i16 vlen:u16 value`, all big-endian."""
    p = tmp_path / "spec.rlog"
    with logspec.rlog.Writer(p) as w:
        w.cycle(1.254567, {"/Double": 0.0})
        w.cycle(1.5, {"/Double": 1.5, "/S": ["a", "", "ü1"]})
    b = p.read_bytes()
    want = (b"\x02" + b"\x00" + struct.pack(">d", 1.254567)
            + b"\x01" + struct.pack(">hH", 0, 7) + b"/Double" + struct.pack(">H", 6) + b"double"
            + b"\x02" + struct.pack(">hH", 0, 8) + struct.pack(">d", 0.0)
            + b"\x00" + struct.pack(">d", 1.5)
            + b"\x02" + struct.pack(">hH", 0, 8) + bytes.fromhex("3ff8000000000000"))
    assert b.startswith(want)
    rest = b[len(want):]
    strings = bytes.fromhex("00000003 00000001 61 00000000 00000003 c3bc31")
    assert rest == (b"\x01" + struct.pack(">hH", 1, 2) + b"/S" + struct.pack(">H", 8) + b"string[]"
                    + b"\x02" + struct.pack(">hH", 1, len(strings)) + strings)


def test_rlog_r1_types_and_null(tmp_path):
    p = tmp_path / "r1.rlog"
    with logspec.rlog.Writer(p, revision=1) as w:
        w.cycle(0.02, {"/I": 5, "/D": 2.5, "/B": 7, "/Arr": [1, 2], "/S": "x"}, types={"/B": "byte"})
        w.cycle(0.04, {"/I": None, "/D": "now a string"})
    b = p.read_bytes()
    assert b[:1] == b"\x01"
    # The first value: key 0 "/I", R1 code 0x03 (Integer), i32 big-endian.
    first_def = b"\x01" + struct.pack(">hH", 0, 2) + b"/I"
    first_val = b"\x02" + struct.pack(">hB", 0, 3) + struct.pack(">i", 5)
    assert b[10:10 + len(first_def) + len(first_val)] == first_def + first_val
    got = [(r["t"], r["key"], r["type"], r["value"]) for r in dump(p)]
    assert (0.02, "/I", "int", 5) in got and (0.02, "/B", "byte", "07") in got
    assert (0.02, "/Arr", "int[]", [1, 2]) in got
    assert (0.04, "/I", "null", None) in got and (0.04, "/D", "string", "now a string") in got


def test_rlog_writer_errors(tmp_path):
    p = tmp_path / "e.rlog"
    with logspec.rlog.Writer(p) as w:
        w.cycle(0.02, {"/x": 1.0})
        with pytest.raises(TypeError, match='key "/y" \\(int64\\): field `value`: expected an integer \\(i64\\), found a float'):
            w.cycle(0.04, {"/y": 2.5}, types={"/y": "int64"})
        with pytest.raises(ValueError, match='key "/x": declared as double; an R2 key keeps its type'):
            w.cycle(0.04, {"/x": 1}, types={"/x": "int64"})
        with pytest.raises(TypeError, match='key "/x" \\(double\\): field `value`: expected a number \\(f64\\), found a string'):
            w.cycle(0.04, {"/x": "a"})
        with pytest.raises(TypeError, match="an empty list has no type of its own"):
            w.cycle(0.04, {"/e": []})
        with pytest.raises(TypeError, match="None has no RLOG type"):
            w.cycle(0.04, {"/n": None})
        with pytest.raises(ValueError, match="needs a type"):
            w.define("/z")
        w.cycle(0.06, {"/e": []}, types={"/e": "double[]"})
    with pytest.raises(ValueError, match="revision must be 1 or 2"):
        logspec.rlog.Writer(tmp_path / "r3.rlog", revision=3)
    with logspec.rlog.Writer(tmp_path / "r1.rlog", revision=1) as w:
        with pytest.raises(ValueError, match="`int64` is not an R1 value type; they are null, boolean"):
            w.cycle(0.0, {"/a": 1}, types={"/a": "int64"})
        with pytest.raises(ValueError, match="out of range for i32"):
            w.cycle(0.0, {"/a": 2**31})
    # A refused value writes nothing of its cycle.
    assert [(r["t"], r["key"]) for r in dump(p)] == [(0.02, "/x"), (0.06, "/e")]


# ----------------------------------------------------------------------------------------------
# WPILOG


def wpilib_read(path):
    """Every record through WPILib's reader: starts (id -> name, type, metadata) and data records
    decoded by the getter of their entry's type."""
    from wpiutil.log import DataLogReader

    r = DataLogReader(str(path))
    assert r.isValid()
    entries, values = {}, []
    getters = {"double": "getDouble", "int64": "getInteger", "float": "getFloat", "boolean": "getBoolean",
               "string": "getString", "double[]": "getDoubleArray", "int64[]": "getIntegerArray",
               "float[]": "getFloatArray", "boolean[]": "getBooleanArray", "string[]": "getStringArray"}
    for rec in r:
        if rec.isStart():
            s = rec.getStartData()
            entries[s.entry] = (s.name, s.type, s.metadata)
        elif rec.isFinish():
            values.append(("finish", entries[rec.getFinishEntry()][0]))
        elif rec.isSetMetadata():
            m = rec.getSetMetadataData()
            values.append(("metadata", entries[m.entry][0], m.metadata))
        else:
            name, typ, _ = entries[rec.getEntry()]
            get = getters.get(typ, "getRaw")
            v = getattr(rec, get)()
            values.append((rec.getTimestamp(), name, list(v) if isinstance(v, (list, tuple)) else v))
    return r.getExtraHeader(), entries, values


def test_wpilog_read_back_by_wpilib(tmp_path):
    need("wpiutil")  # WPILib's reader
    np = need("numpy")  # a numpy array as a value
    p = tmp_path / "w.wpilog"
    with logspec.wpilog.Writer(p, extra_header="logspec test") as w:
        d = w.start("/d", "double", metadata='{"source":"test"}', timestamp=1)
        i = w.start("/i", "int64")
        w.start("/f", "float")
        w.start("/b", "boolean")
        w.start("/s", "string")
        w.start("/da", "double[]")
        w.start("/ia", "int64[]")
        w.start("/ba", "boolean[]")
        w.start("/sa", "string[]")
        w.start("/pose", "struct:Pose2d")
        w.append(d, 1.25, timestamp=20_000)
        w.append(i, -(2**63), timestamp=20_000)
        w.append("/f", 0.1, timestamp=20_000)
        w.append("/b", True, timestamp=20_000)
        w.append("/s", "héllo", timestamp=20_000)
        w.append("/da", np.array([1.0, -2.5]), timestamp=40_000)
        w.append("/ia", [1, 2, 3], timestamp=40_000)
        w.append("/ba", [True, False], timestamp=40_000)
        w.append("/sa", ["a", "", "ü1"], timestamp=40_000)
        w.append("/pose", struct.pack("<3d", 1, 2, 3), timestamp=40_000)
        w.set_metadata("/d", "new", timestamp=50_000)
        w.finish("/d", timestamp=60_000)
        assert w.entries == {n: k for n, k in zip(
            ["/i", "/f", "/b", "/s", "/da", "/ia", "/ba", "/sa", "/pose"], range(2, 11))}
    extra, entries, values = wpilib_read(p)
    assert extra == "logspec test"
    assert entries[1] == ("/d", "double", '{"source":"test"}')
    assert entries[10] == ("/pose", "struct:Pose2d", "")
    assert values == [
        (20_000, "/d", 1.25), (20_000, "/i", -(2**63)), (20_000, "/f", pytest.approx(0.1, rel=1e-7)),
        (20_000, "/b", True), (20_000, "/s", "héllo"), (40_000, "/da", [1.0, -2.5]), (40_000, "/ia", [1, 2, 3]),
        (40_000, "/ba", [True, False]), (40_000, "/sa", ["a", "", "ü1"]),
        (40_000, "/pose", struct.pack("<3d", 1, 2, 3)), ("metadata", "/d", "new"), ("finish", "/d"),
    ]


def test_wpilog_writer_errors(tmp_path):
    need("wpiutil")  # WPILib's reader
    p = tmp_path / "e.wpilog"
    with logspec.wpilog.Writer(p) as w:
        d = w.start("/d", "double")
        with pytest.raises(TypeError, match='entry 1 "/d" \\(double\\): field `value`: expected a number'):
            w.append(d, "x", timestamp=0)
        with pytest.raises(ValueError, match="'/nope' is not a started entry; start\\(\\) it first \\(active: 1 \"/d\" \\(double\\)\\)"):
            w.append("/nope", 1.0, timestamp=0)
        with pytest.raises(ValueError, match="already started"):
            w.start("/d", "double")
        with pytest.raises(TypeError, match="expected bytes, found a string"):
            w.append(w.start("/r", "raw"), "text", timestamp=0)
        with pytest.raises(ValueError, match="out of range for i64"):
            w.append(w.start("/i", "int64"), 2**63, timestamp=0)
        w.append(d, 2.0, timestamp=5)
    _, _, values = wpilib_read(p)
    assert values == [(5, "/d", 2.0)]
