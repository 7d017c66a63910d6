"""rosbag2 bags through the Python package: a split bag's directory is one log, its records the
reference's (rosbags' AnyReader on the directory, tests/data/ros2/gen_split_*.expected.jsonl)."""
from __future__ import annotations

import json

import pytest

import logspec
from conftest import DATA


@pytest.mark.parametrize("stem", ["gen_split_db3", "gen_split_mcap"])
def test_a_split_bag_directory_is_one_log(stem: str) -> None:
    bag = DATA / "ros2" / stem
    expected = [json.loads(x) for x in (DATA / "ros2" / f"{stem}.expected.jsonl").read_text().splitlines() if x]
    want = [m for m in expected if m["kind"] == "message"]
    log = logspec.open(bag)
    info = log.info()
    assert info["format"] == "rosbag2" and info["messages"] == len(want) and len(info["files"]) == 3
    got = [r for r in log if r["kind"] == "message"]
    assert got == want
    tables = log.tables()
    assert {k: v.num_rows for k, v in tables.items()} == {"/chatter": 5, "/count": 3, "/late": 1}


def test_a_plain_directory_is_still_refused(tmp_path) -> None:
    with pytest.raises(IsADirectoryError):
        logspec.open(tmp_path)
