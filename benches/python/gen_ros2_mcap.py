#!/usr/bin/env python3
"""Write a large ROS 2 MCAP recording of a small mobile robot for `cargo bench --bench mcap`, with
the `rosbags` library's own rosbag2 writer (0.11.9; MCAP storage, uncompressed chunks, as
rosbag2 records by default).

The same topics, rates and contents as the ROS1 bench input (`gen_rosbag.py` of the shared
bench-input generators), serialized as CDR:
  /imu     sensor_msgs/msg/Imu           200 Hz
  /pose    geometry_msgs/msg/PoseStamped 100 Hz
  /points  sensor_msgs/msg/PointCloud2    10 Hz  (16 rings x 128 azimuths, x/y/z/intensity f32: 32 KiB)
About 80 % of the bytes are point clouds. The content is deterministic for a given --seed.

Usage: gen_ros2_mcap.py OUT.mcap [--mb 50] [--seed 1]   (--mb: message bytes to write)
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

T0 = 1_700_000_000 * 10**9
STEP_NS = 5_000_000  # 200 Hz base tick


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    ts = get_typestore(Stores.ROS2_JAZZY)
    T = ts.types
    Time, Header = T["builtin_interfaces/msg/Time"], T["std_msgs/msg/Header"]
    Quat, Vec3, Point = T["geometry_msgs/msg/Quaternion"], T["geometry_msgs/msg/Vector3"], T["geometry_msgs/msg/Point"]
    Imu, PoseStamped, Pose = T["sensor_msgs/msg/Imu"], T["geometry_msgs/msg/PoseStamped"], T["geometry_msgs/msg/Pose"]
    PC2, PF = T["sensor_msgs/msg/PointCloud2"], T["sensor_msgs/msg/PointField"]
    rng = np.random.default_rng(a.seed)

    def hdr(t_ns: int, frame: str):
        return Header(stamp=Time(sec=t_ns // 10**9, nanosec=t_ns % 10**9), frame_id=frame)

    fields = [PF(name=n, offset=4 * i, datatype=7, count=1) for i, n in enumerate(["x", "y", "z", "intensity"])]
    rings, az = 16, 128
    elev = np.deg2rad(np.linspace(-15.0, 15.0, rings))[:, None]
    azim = np.linspace(0, 2 * np.pi, az, endpoint=False)[None, :]
    imu_cov = np.array([0.0025, 0, 0, 0, 0.0025, 0, 0, 0, 0.0025], dtype=np.float64)

    out = Path(a.out)
    tmp = Path(tempfile.mkdtemp(prefix="gen_ros2_mcap."))
    bag = tmp / "bag"
    target = int(a.mb * 1e6)
    total = 0
    counts = {"imu": 0, "pose": 0, "points": 0}
    with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        c_imu = w.add_connection("/imu", "sensor_msgs/msg/Imu", typestore=ts)
        c_pose = w.add_connection("/pose", "geometry_msgs/msg/PoseStamped", typestore=ts)
        c_pts = w.add_connection("/points", "sensor_msgs/msg/PointCloud2", typestore=ts)
        k = 0
        while total < target:
            t = T0 + k * STEP_NS
            s = k * STEP_NS * 1e-9
            yaw = 0.1 * s + 0.3 * np.sin(0.05 * s)
            n = rng.normal(0.0, 1.0, 7)
            msg = Imu(
                header=hdr(t - 300_000, "imu_link"),
                orientation=Quat(x=0.001 * n[0], y=0.001 * n[1], z=float(np.sin(yaw / 2)), w=float(np.cos(yaw / 2))),
                orientation_covariance=imu_cov,
                angular_velocity=Vec3(x=0.01 * n[2], y=0.01 * n[3], z=0.1 + 0.015 * np.cos(0.05 * s) + 0.01 * n[4]),
                angular_velocity_covariance=imu_cov * 0.1,
                linear_acceleration=Vec3(x=0.2 * n[5], y=0.2 * n[6], z=9.81),
                linear_acceleration_covariance=imu_cov * 4,
            )
            raw = ts.serialize_cdr(msg, "sensor_msgs/msg/Imu")
            w.write(c_imu, t, raw)
            total += len(raw)
            counts["imu"] += 1
            if k % 2 == 0:
                msg = PoseStamped(
                    header=hdr(t - 2_000_000, "map"),
                    pose=Pose(position=Point(x=20 * np.cos(0.01 * s), y=20 * np.sin(0.01 * s), z=0.0),
                              orientation=Quat(x=0.0, y=0.0, z=float(np.sin(yaw / 2)), w=float(np.cos(yaw / 2)))),
                )
                raw = ts.serialize_cdr(msg, "geometry_msgs/msg/PoseStamped")
                w.write(c_pose, t + 1000, raw)
                total += len(raw)
                counts["pose"] += 1
            if k % 20 == 10:
                rngs = 5.0 + 25.0 * (0.5 + 0.5 * np.sin(azim * 3 + s)) + rng.normal(0.0, 0.02, (rings, az))
                pts = np.empty((rings, az, 4), dtype=np.float32)
                pts[..., 0] = rngs * np.cos(elev) * np.cos(azim)
                pts[..., 1] = rngs * np.cos(elev) * np.sin(azim)
                pts[..., 2] = rngs * np.sin(elev)
                pts[..., 3] = np.round(rng.uniform(0, 255, (rings, az)))
                msg = PC2(
                    header=hdr(t - 50_000_000, "lidar"), height=rings, width=az, fields=fields,
                    is_bigendian=False, point_step=16, row_step=16 * az,
                    data=np.frombuffer(pts.tobytes(), dtype=np.uint8), is_dense=True,
                )
                raw = ts.serialize_cdr(msg, "sensor_msgs/msg/PointCloud2")
                w.write(c_pts, t + 2000, raw)
                total += len(raw)
                counts["points"] += 1
            k += 1
    (written,) = bag.glob("*.mcap")
    shutil.move(str(written), out)
    shutil.rmtree(tmp)
    print(f"{out}: {total} message bytes, {sum(counts.values())} messages {counts}, {k * STEP_NS * 1e-9:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
