"""Bad input: cut and corrupted copies of every format raise a LogspecError with the file and
byte offset after every complete record, `on_error="warn"` keeps them, and nothing crashes the
interpreter (each probe runs in a child interpreter, whose exit status must be its own)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import logspec

from conftest import DATA, as_dumped, assert_records_equal, dump_objects, need

SAMPLES = [
    DATA / "usvlog" / "step.usvlog",
    DATA / "rlog" / "akit_v1.8.1_robotlog.rlog",
    DATA / "rlog" / "gen_akit_head_r2_stream.bin",
    DATA / "wpilog" / "gen_wpilib_structs.wpilog",
    DATA / "carla" / "878-supp-mat_crash.log",
    DATA / "rosbag" / "test_none.bag",
]


def cut_copy(src: Path, tmp: Path, keep: int) -> Path:
    out = tmp / f"cut_{keep}_{src.name}"
    out.write_bytes(src.read_bytes()[:keep])
    return out


@pytest.mark.parametrize("src", SAMPLES, ids=lambda p: p.name)
def test_cut_file_gives_complete_records_then_raises(src: Path, tmp_path: Path, logspec_bin: str):
    need("pyarrow")  # the tables
    size = src.stat().st_size
    for keep in (size // 2 + 3, size - 1):
        cut = cut_copy(src, tmp_path, keep)
        expected, status = dump_objects(logspec_bin, cut)
        assert status == 1
        got = []
        log = logspec.open(cut)
        with pytest.raises(logspec.LogspecError) as info:
            for r in log:
                got.append(r)
        assert_records_equal(got, expected, log.format)
        e = info.value
        assert isinstance(e, logspec.DecodeError)
        assert e.file == str(cut)
        assert isinstance(e.offset, int) and 0 <= e.offset <= keep, str(e)
        assert str(e.offset) in str(e)
        with pytest.warns(logspec.LogspecWarning):
            assert_records_equal(list(logspec.open(cut).records(on_error="warn")), expected, log.format)
        with pytest.raises(logspec.DecodeError):
            logspec.open(cut).tables()
        with pytest.warns(logspec.LogspecWarning):
            logspec.open(cut).tables(on_error="warn")


def test_usvlog_error_names_the_record(tmp_path: Path):
    cut = cut_copy(DATA / "usvlog" / "step.usvlog", tmp_path, 100_000)
    with pytest.raises(logspec.DecodeError) as info:
        list(logspec.open(cut))
    assert info.value.record == 3035 and info.value.offset == 99988


PROBE = r"""
import sys, warnings, logspec
warnings.simplefilter("ignore")
path = sys.argv[1]
try:
    log = logspec.open(path)
    for _ in log.records(on_error="warn"):
        pass
    log.info()
    log.tables(on_error="warn")
except logspec.LogspecError:
    pass
print("done")
"""


@pytest.mark.parametrize("src", SAMPLES, ids=lambda p: p.name)
def test_corrupted_copies_never_crash(src: Path, tmp_path: Path):
    need("pyarrow")  # the probe's tables
    data = bytearray(src.read_bytes())
    n = len(data)
    paths = []
    for i, at in enumerate((16, n // 7, n // 3, n // 2, n - 9)):
        bad = bytearray(data)
        bad[at : at + 8] = b"\xff\xff\xff\x7f\x00\x80\xff\xff"[: max(0, min(8, n - at))]
        p = tmp_path / f"bad{i}_{src.name}"
        p.write_bytes(bytes(bad))
        paths.append(p)
    for p in paths:
        r = subprocess.run([sys.executable, "-c", PROBE, str(p)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and r.stdout.strip() == "done", (p.name, r.returncode, r.stderr[-2000:])


def test_not_a_log(tmp_path: Path):
    p = tmp_path / "notes.txt"
    p.write_text("hello, not a log\n")
    with pytest.raises(logspec.FormatError) as info:
        logspec.open(p)
    assert info.value.file == str(p) and "unrecognised format" in str(info.value)
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    with pytest.raises(logspec.FormatError):
        logspec.open(empty)


def test_missing_file_and_bad_arguments(tmp_path: Path):
    with pytest.raises(FileNotFoundError):
        logspec.open(tmp_path / "nope.bin")
    with pytest.raises(logspec.UsageError):
        logspec.open(DATA / "usvlog" / "step.usvlog", format="csv")
    with pytest.raises(ValueError):
        list(logspec.open(DATA / "usvlog" / "step.usvlog").records(on_error="ignore"))
    with pytest.raises(logspec.UsageError):
        list(logspec.open(DATA / "usvlog" / "step.usvlog").records(frames=(0, 1)))


def test_unknown_channel_lists_the_channels():
    need("pyarrow")  # log.table
    log = logspec.open(DATA / "usvlog" / "step.usvlog")
    with pytest.raises(logspec.FilterError) as info:
        log.table("REC_NAV_SOLUTON")
    assert "REC_NAV_SOLUTION" in str(info.value)
    with pytest.raises(logspec.FilterError):
        list(log.records("REC_NAV_SOLUTON"))
    with pytest.raises(logspec.FilterError) as info:
        log.table("REC_*")
    assert info.value.file == log.path and info.value.offset is None


def test_stopping_early_ends_the_reader():
    # Breaking out of the loop drops the iterator; the reader thread ends with it.
    log = logspec.open(DATA / "rosbag" / "rosbagjs-example.bag")
    for i, _ in enumerate(log):
        if i == 3:
            break
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sum(1 for _ in log) > 8000
