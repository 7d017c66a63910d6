"""A STAND-IN for usv-autopilot's `tools/log_io/io.py` `read_timeseries_bin` (commit a5c1f5d), the
reader the generated `python/usvlog.py` replaces. Its code is not in this repository and was not
available when this was written; this reader is written from the description of how it works
(the USVLOG spec's "Reference reader behaviour" and the testdata README): read the file, check
the 32-byte header (`<6sIBQ13x`), then per record unpack the `<QHH` header, look the type up in a
layout table of (name, struct format, field names), check the length, unpack the payload and
append every value to a per-field list, skipping and reporting unknown types; at the end turn
every list into a numpy array. It returns per-record dicts of numpy arrays, the record counts and
the unknown records. It is only a benchmark baseline (benches/python_module.rs): timings of the
real reader quoted in issue 20 are 1.27 s on 20 MB and about 18 s / 1.8 GB on 200 MB.

Usage: python3 upstream_standin.py FILE  (prints the record count)
"""
import struct
import sys
from dataclasses import dataclass, field

import numpy as np

# type id -> (name, payload struct format, field names): the layout table of the spec.
LAYOUT = {
    1: ("REC_NAV_SOLUTION", "<6f", ("x", "y", "psi", "v", "r", "b_g")),
    2: ("REC_GUIDANCE_REF", "<4f", ("psi_d", "v_d", "e_y", "e_psi")),
    3: ("REC_ACTUATOR_REQ", "<2fB3x", ("u_s_req", "u_d_req", "src")),
    4: ("REC_ACTUATOR_CMD", "<2f", ("u_s_cmd", "u_d_cmd")),
    5: ("REC_ESC_OUTPUT", "<2f", ("u_L", "u_R")),
    6: ("REC_MISSION_STATE", "<HBB4x6f", ("idx", "active", "done", "x0", "y0", "x1", "y1", "v_seg", "d_wp")),
    7: ("REC_MIXER_FEEDBACK", "<2f3B5x2f", ("u_s_ach", "u_d_ach", "sat_L", "sat_R", "sat_any", "u_L_ach", "u_R_ach")),
    8: ("REC_SPEED_SCHED_DEBUG", "<6f2B2x", ("v_seg", "v_cap", "v_d", "e_psi", "d_wp", "dv", "cap_wp", "cap_psi")),
    9: ("REC_SPEED_CTRL_DEBUG", "<6fB3x", ("v_d", "v_hat", "e_v", "u_s_raw", "u_s_req", "i_v", "sat_u_s")),
    10: ("REC_YAW_CTRL_DEBUG", "<7fB3x", ("psi_d", "psi", "e_psi", "r_d", "r", "e_r", "u_d_req", "sat_u_d")),
    11: ("REC_EKF_DIAG", "<6fI", ("P_xx", "P_yy", "P_psi", "P_v", "P_r", "P_bg", "status_flags")),
    12: ("REC_SENSOR_GNSS", "<4fB3x", ("x", "y", "cog", "sog", "valid")),
    13: ("REC_SENSOR_GYRO", "<2fB3x", ("z_gyro", "b_g_est", "valid")),
}
HEADER = "<6sIBQ13x"
RECORD = "<QHH"


@dataclass
class TimeseriesData:
    header: dict
    records: dict = field(default_factory=dict)
    record_counts: dict = field(default_factory=dict)
    unknown_records: list = field(default_factory=list)


def read_timeseries_bin(path, strict=True):
    with open(path, "rb") as f:
        data = f.read()
    hsize = struct.calcsize(HEADER)
    if len(data) < hsize:
        raise ValueError("file shorter than the header")
    magic, schema, endian, t0 = struct.unpack_from(HEADER, data, 0)
    if magic != b"USVLOG":
        raise ValueError("bad magic %r" % magic)
    if endian != 1:
        raise ValueError("unsupported endianness %d" % endian)
    cols = {}
    counts = {}
    unknown = []
    rsize = struct.calcsize(RECORD)
    off = hsize
    while off < len(data):
        if off + rsize > len(data):
            raise ValueError("truncated record header at byte %d" % off)
        t_us, rtype, ln = struct.unpack_from(RECORD, data, off)
        off += rsize
        if off + ln > len(data):
            raise ValueError("truncated payload at byte %d" % (off - rsize))
        spec = LAYOUT.get(rtype)
        if spec is None:
            unknown.append((t_us, rtype, ln))
            off += ln
            continue
        name, fmt, names = spec
        if strict and ln != struct.calcsize(fmt):
            raise ValueError("record %s at byte %d: length %d, expected %d" % (name, off - rsize, ln, struct.calcsize(fmt)))
        values = struct.unpack_from(fmt, data, off)
        off += ln
        rec = cols.get(name)
        if rec is None:
            rec = cols[name] = {"t_us": []}
            for n in names:
                rec[n] = []
        rec["t_us"].append(t_us)
        for n, v in zip(names, values):
            rec[n].append(v)
        counts[name] = counts.get(name, 0) + 1
    records = {name: {k: np.asarray(v) for k, v in rec.items()} for name, rec in cols.items()}
    header = {"magic": magic, "fw_model_schema": schema, "endianness": endian, "t0_us": t0}
    return TimeseriesData(header, records, counts, unknown)


if __name__ == "__main__":
    print(sum(read_timeseries_bin(sys.argv[1]).record_counts.values()))
