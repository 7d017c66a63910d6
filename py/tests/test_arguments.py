"""The public functions' arguments: a wrong type is a TypeError that names the argument, a wrong
value (NaN for a time, frames out of order) a ValueError, raised before anything is read; paths
are what `os.fsdecode` takes (str, bytes, os.PathLike). Never a value silently taken for another:
the ints of b"/x" as channel names, a dict's keys, NaN as "no sample"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import logspec

from conftest import DATA, need

RLOG = DATA / "rlog" / "akit_v1.8.1_robotlog.rlog"
CARLA = DATA / "carla" / "878-supp-mat_crash.log"


@pytest.fixture(scope="module")
def log() -> logspec.Log:
    return logspec.open(RLOG)


@pytest.mark.parametrize("channels", [b"/DriveTrain/LeftCurrentAmps", bytearray(b"/x"), {"/DriveTrain/LeftCurrentAmps": 1}, 5])
def test_channels_of_a_wrong_type_are_a_type_error_naming_it(log: logspec.Log, channels):
    need("pyarrow")
    with pytest.raises(TypeError, match=r"^channels must be a str, a sequence of str or None, not "):
        log.tables(channels=channels)
    with pytest.raises(TypeError, match=r"^channels must be"):
        next(iter(log.records(channels)))


def test_a_channel_that_is_not_a_str_is_a_type_error_naming_its_place(log: logspec.Log):
    need("pyarrow")
    with pytest.raises(TypeError, match=r"^channels\[1\] must be a str .*not bytes"):
        log.tables(channels=["/DriveTrain/LeftCurrentAmps", b"/x"])
    with pytest.raises(TypeError, match=r"^channel must be a str .*not bytes"):
        log.table(b"/DriveTrain/LeftCurrentAmps")


def test_channels_as_a_str_a_list_a_tuple_or_a_generator_are_the_same(log: logspec.Log):
    need("pyarrow")
    name = "/DriveTrain/LeftCurrentAmps"
    want = log.tables(channels=name)
    assert list(want) == [name]
    for same in ([name], (name,), (n for n in [name])):
        got = log.tables(channels=same)
        assert list(got) == [name] and got[name].equals(want[name])


@pytest.mark.parametrize("bound", ["since", "until"])
def test_a_nan_time_is_a_value_error(log: logspec.Log, bound: str):
    need("pyarrow")
    with pytest.raises(ValueError, match=rf"^{bound} must be a number of seconds, not NaN$"):
        log.tables(**{bound: float("nan")})
    with pytest.raises(ValueError, match=rf"^{bound} must be a number of seconds, not NaN$"):
        next(iter(log.records(**{bound: float("nan")})))
    with pytest.raises(ValueError, match=rf"^{bound} must be"):
        log.table("/DriveTrain/LeftCurrentAmps", **{bound: float("nan")})


@pytest.mark.parametrize("value", [True, "1", b"1", [1.0]])
def test_a_time_of_a_wrong_type_is_a_type_error(log: logspec.Log, value):
    need("pyarrow")
    with pytest.raises(TypeError, match=r"^since must be a number of seconds \(int or float\) or None, not "):
        log.tables(since=value)
    with pytest.raises(TypeError, match=r"^until must be a number of seconds"):
        next(iter(log.records(until=value)))


def test_times_as_ints_floats_and_numpy_numbers_are_the_same(log: logspec.Log):
    need("pyarrow")
    np = need("numpy")
    name = "/SystemStats/CANBusUtilization"
    want = log.table(name, since=5.0, until=10.0)
    # The file's own samples: 0.92 s to 28.9 s; a window inside holds fewer rows.
    assert 0 < want.num_rows < log.table(name).num_rows
    for since, until in ((5, 10), (np.float64(5), np.int64(10)), (np.float32(5), 10.0)):
        assert log.table(name, since=since, until=until).equals(want)


def test_open_takes_bytes_and_path_like_paths(log: logspec.Log):
    need("pyarrow")
    name = "/DriveTrain/LeftCurrentAmps"
    want = log.table(name)
    for path in (os.fsencode(str(RLOG)), Path(RLOG), str(RLOG)):
        got = logspec.open(path)
        assert got.format == "rlog"
        assert got.table(name).equals(want)


class _BytesPath:
    def __fspath__(self) -> bytes:
        return os.fsencode(str(RLOG))


def test_open_takes_a_path_like_of_bytes():
    assert logspec.open(_BytesPath()).format == "rlog"


def test_a_path_of_a_wrong_type_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match=r"^argument 'path': expected str, bytes or os.PathLike object, not int"):
        logspec.open(5)
    with pytest.raises(TypeError, match=r"^argument 'schema': expected str, bytes or os.PathLike object, not int"):
        logspec.open(RLOG, schema=5)
    with pytest.raises(FileNotFoundError):
        logspec.open(os.fsencode(str(RLOG)) + b".missing")


def test_open_flags_and_format_of_a_wrong_type_are_type_errors():
    with pytest.raises(TypeError, match=r"^format must be a str .*not bytes"):
        logspec.open(RLOG, b"rlog")
    with pytest.raises(TypeError, match=r"^assume_r1 must be True or False, not int"):
        logspec.open(RLOG, assume_r1=1)


def test_bools_and_on_error_of_a_wrong_type_are_type_errors(log: logspec.Log):
    need("pyarrow")
    # A truthy string is not True: "no" would have flattened the tables.
    with pytest.raises(TypeError, match=r"^flatten must be True or False, not str"):
        log.tables(flatten="no")
    with pytest.raises(TypeError, match=r"^flatten must be True or False"):
        log.table("/DriveTrain/LeftCurrentAmps", flatten=1)
    with pytest.raises(TypeError, match=r"^file_order must be True or False, not str"):
        next(iter(log.records(file_order="no")))
    with pytest.raises(TypeError, match=r"^on_error must be 'raise' or 'warn', not int"):
        log.tables(on_error=1)
    with pytest.raises(ValueError, match=r"^on_error must be 'raise' or 'warn', not 'ignore'"):
        log.tables(on_error="ignore")


@pytest.mark.parametrize(
    "frames, error",
    [(5, TypeError), ("ab", TypeError), ((1, 2, 3), TypeError), ((1.0, 2), TypeError), ((True, 2), TypeError),
     ((-1, 2), ValueError), ((5, 2), ValueError)],
)
def test_frames_of_a_wrong_type_or_order_are_errors_naming_them(frames, error):
    log = logspec.open(CARLA)
    with pytest.raises(error, match=r"^frames must be"):
        next(iter(log.records(frames=frames)))


def test_frames_as_a_tuple_or_a_list_are_the_same():
    log = logspec.open(CARLA)
    assert list(log.records(frames=[0, 3])) == list(log.records(frames=(0, 3)))


@pytest.mark.parametrize("writer, name", [(logspec.rlog.Writer, "w.rlog"), (logspec.usvlog.Writer, "w.usvlog"), (logspec.wpilog.Writer, "w.wpilog")])
def test_writers_take_bytes_paths_and_name_a_wrong_one(tmp_path: Path, writer, name: str):
    path = tmp_path / name
    with writer(os.fsencode(str(path))) as w:
        assert Path(w.path) == path
    assert path.is_file()
    with pytest.raises(TypeError, match=r"^argument 'path': expected str, bytes or os.PathLike object, not float"):
        writer(1.5)


def test_an_rlog_cycle_at_nan_is_a_value_error(tmp_path: Path):
    with logspec.rlog.Writer(tmp_path / "w.rlog") as w:
        with pytest.raises(ValueError, match=r"^timestamp must be a number of seconds, not NaN$"):
            w.cycle(float("nan"), {"/a": 1.0})
        w.cycle(0.02, {"/a": 1.0})
    # The NaN cycle wrote nothing: one cycle, at 0.02 s.
    assert [r["t"] for r in logspec.open(tmp_path / "w.rlog").records()] == [0.02]


def test_read_timeseries_bin_takes_bytes_paths_and_names_a_wrong_one():
    need("numpy")
    step = DATA / "usvlog" / "step.usvlog"
    want = logspec.usvlog.read_timeseries_bin(step)
    got = logspec.usvlog.read_timeseries_bin(os.fsencode(str(step)))
    assert got.record_counts == want.record_counts
    with pytest.raises(TypeError, match=r"^argument 'path': expected str, bytes or os.PathLike object, not int"):
        logspec.usvlog.read_timeseries_bin(5)
    # A bytes path that does not exist is reported under its name, not as "b'...'".
    with pytest.raises(FileNotFoundError, match=r"^/nonexistent/x.bin: "):
        logspec.usvlog.read_timeseries_bin(b"/nonexistent/x.bin")
