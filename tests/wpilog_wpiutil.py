"""WPILib's own DataLog writer and reader (robotpy-wpiutil), the references of tests/external/wpilog_wpiutil.rs.

    python3 wpilog_wpiutil.py write OUT.wpilog   writes a log of every type with DataLogWriter
    python3 wpilog_wpiutil.py read FILE.wpilog   prints every record read by DataLogReader, one
                                                 JSON object per line, in the shape of `logspec dump`
"""

import json
import math
import struct
import sys

import wpiutil
from wpiutil.log import DataLogReader


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def write(path):
    log = wpiutil.DataLogWriter(path, "robotpy-wpiutil")
    ts = [1000]

    def t():
        ts[0] += 1000
        return ts[0]

    def start(name, ty, meta=""):
        return log.start(name, ty, meta, t())

    e = start("/b", "boolean", '{"unit":"none"}')
    for v in (True, False):
        log.appendBoolean(e, v, t())
    e = start("/i", "int64")
    for v in (-(2**63), 2**63 - 1, 2**53 + 1, 0):
        log.appendInteger(e, v, t())
    e = start("/f", "float")
    for v in (0.1, -0.0, float("nan"), float("inf"), 1e-45):
        log.appendFloat(e, v, t())
    e = start("/d", "double")
    for v in (0.1, -0.0, float("-inf"), 5e-324, 1.7976931348623157e308):
        log.appendDouble(e, v, t())
    e = start("/s", "string")
    for v in ("", "häh\nline\ttab \"q\"", "\u0001"):
        log.appendString(e, v, t())
    e = start("/ba", "boolean[]")
    for v in ([], [True, False, True]):
        log.appendBooleanArray(e, v, t())
    e = start("/ia", "int64[]")
    for v in ([], [1, -1, 2**62]):
        log.appendIntegerArray(e, v, t())
    e = start("/fa", "float[]")
    for v in ([], [0.5, -0.0, float("nan")]):
        log.appendFloatArray(e, v, t())
    e = start("/da", "double[]")
    for v in ([], [0.25, float("inf")]):
        log.appendDoubleArray(e, v, t())
    e = start("/sa", "string[]")
    for v in ([], ["a", "", "ü"]):
        log.appendStringArray(e, v, t())
    e = start("/r", "raw")
    for v in (b"", b"\x00\xff\x10"):
        log.appendRaw(e, v, t())
    # A struct value as WPILib logs one: its schema under /.schema/, the value as raw bytes.
    log.addSchema("struct:Pair", "structschema", "double a;int32 b", t())
    e = start("/pair", "struct:Pair")
    log.appendRaw(e, struct.pack("<di", 1.5, -7), t())
    e2 = start("/pairs", "struct:Pair[]")
    log.appendRaw(e2, struct.pack("<didi", 1.0, 2, 3.0, 4), t())
    log.setMetadata(e, '{"changed":true}', t())
    log.finish(e, t())
    # A new entry after a Finish; a timestamp that needs all 8 bytes of the record header.
    e = start("/late", "int64")
    log.appendInteger(e, 42, 2**56)
    log.flush()
    del log


def shown(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        if x == 0 and math.copysign(1, x) < 0:
            return "-0"
    return x


def value(rec, ty):
    if ty == "boolean":
        return rec.getBoolean()
    if ty == "int64":
        return rec.getInteger()
    if ty == "float":
        return shown(rec.getFloat())
    if ty == "double":
        return shown(rec.getDouble())
    if ty == "string":
        return rec.getString()
    if ty == "boolean[]":
        return list(rec.getBooleanArray())
    if ty == "int64[]":
        return list(rec.getIntegerArray())
    if ty == "float[]":
        return [shown(x) for x in rec.getFloatArray()]
    if ty == "double[]":
        return [shown(x) for x in rec.getDoubleArray()]
    if ty == "string[]":
        return list(rec.getStringArray())
    return bytes(rec.getRaw()).hex()


def read(path):
    r = DataLogReader(path)
    if not r.isValid():
        sys.exit("%s: DataLogReader says the file is not valid" % path)
    out = [{"rec": "header", "version": r.getVersion(), "extra_header": r.getExtraHeader()}]
    entries = {}
    for rec in r:
        ts = rec.getTimestamp()
        if rec.isStart():
            d = rec.getStartData()
            entries[d.entry] = (d.name, d.type)
            out.append({"rec": "start", "ts": ts, "entry": d.entry, "name": d.name, "type": d.type, "metadata": d.metadata})
        elif rec.isFinish():
            entry = rec.getFinishEntry()
            entries.pop(entry, None)
            out.append({"rec": "finish", "ts": ts, "entry": entry})
        elif rec.isSetMetadata():
            d = rec.getSetMetadataData()
            out.append({"rec": "set_metadata", "ts": ts, "entry": d.entry, "metadata": d.metadata})
        elif rec.isControl():
            out.append({"rec": "control_invalid", "ts": ts, "payload": bytes(rec.getRaw()).hex()})
        else:
            name, ty = entries.get(rec.getEntry(), (None, None))
            line = {"rec": "data", "ts": ts, "entry": rec.getEntry(), "name": name, "type": ty}
            try:
                line["value"] = value(rec, ty) if ty else bytes(rec.getRaw()).hex()
            except (TypeError, ValueError, UnicodeDecodeError):
                # The payload does not decode as the entry's type.
                line["value"] = None
                line["invalid"] = bytes(rec.getRaw()).hex()
            out.append(line)
    for o in out:
        print(json.dumps(o, ensure_ascii=False))


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
