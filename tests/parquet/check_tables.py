"""Reads every table that `logspec export --parquet` wrote for some logs with pyarrow and holds
it to `logspec dump` of the same logs, value for value: the rows of each channel in order, their
times, the Arrow types (the documented mapping) and the units in the field metadata.

usage: check_tables.py LOGSPEC OUT FILE...

The expected side is built from the dump's JSON only (its documented shapes, docs/output.md) and
from the schema TOML for the units; it shares no code with the exporter.
"""

import json
import math
import os
import subprocess
import sys
import tomllib

import pyarrow as pa
import pyarrow.parquet as pq


def escape(name):
    out = []
    for i, c in enumerate(name):
        if (c.isascii() and c.isalnum()) or c in "_-" or (c == "." and i > 0):
            out.append(c)
        else:
            out.extend("%%%02X" % b for b in c.encode())
    return "".join(out) or "%00"


def table_dir(channel):
    name = channel[1:] if channel.startswith("/") else channel
    return ".".join(escape(p).replace(".", "%2E") for p in name.split("/"))


def seconds_to_ns(t):
    return math.floor(t * 1e9 + 0.5) if t > 0 else 0


def expected_rows(logspec, path):
    """{table: [(t_ns, row dict)]} from `logspec dump`."""
    out = subprocess.run([logspec, "dump", path], capture_output=True, text=True)
    tables = {}
    conns = {}
    first_type = {}
    lines = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    # ROS: a table per topic; connections on one topic with another type than the first seen
    # are `topic#type`.
    topic_type = {}
    for d in lines:
        if d.get("kind") == "connection":
            conns[d["conn"]] = d
    # DataFlash: each id's format and columns (FMT) and instance column (FMTU `#`), as they come.
    df_fmt, df_inst, df_last = {}, {}, [0]
    for d in lines:
        if d.get("kind") == "msg" and "ofs" in d:  # DataFlash: a table per message name (.N: instance N > 0)
            data = d["data"]
            if d["type"] == "FMT":
                df_fmt[data["Type"]] = (data["Format"], data["Columns"].split(","))
            elif d["type"] == "FMTU" and data["FmtType"] in df_fmt and "#" in data["UnitIds"]:
                df_inst[data["FmtType"]] = df_fmt[data["FmtType"]][1][data["UnitIds"].index("#")]
            chars, cols = df_fmt.get(d["id"], ("", []))
            t = df_last[0]
            for col, per in (("TimeUS", 1), ("TimeMS", 1000)):
                if col in cols and chars[cols.index(col)] not in "cCeELg":
                    t = max(data[col], 0) * per
                    break
            df_last[0] = max(df_last[0], t)
            name = d["type"]
            inst = data.get(df_inst.get(d["id"]))
            if isinstance(inst, int) and inst > 0:
                name = "%s.%d" % (name, inst)
            tables.setdefault(name, []).append((t * 1000, data))
        elif "t_us" in d and "fields" in d:  # USVLOG
            tables.setdefault(d["name"], []).append((d["t_us"] * 1000, d["fields"]))
        elif d.get("kind") == "packet" and "fields" in d:  # CARLA
            t = seconds_to_ns(d["elapsed"])
            f = d["fields"]
            recs = f.get("records") if list(f) == ["records"] else None
            if isinstance(recs, list) and all(isinstance(r, dict) and isinstance(r.get("db_id"), int) for r in recs):
                for r in recs:
                    tables.setdefault(d["name"], []).append((t, r))
            else:
                tables.setdefault(d["name"], []).append((t, f))
        elif "key" in d and "t" in d and "decoded" in d:  # RLOG struct or proto values
            tables.setdefault(d["key"], []).append((seconds_to_ns(d["t"]), {"json": as_object(d["decoded"])}))
        elif "key" in d and "t" in d:  # RLOG
            first = first_type.setdefault(d["key"], d["type"])
            name = d["key"] if d["type"] in (first, "null") else d["key"] + "#" + d["type"]
            tables.setdefault(name, []).append((seconds_to_ns(d["t"]), {"value": d["value"]}))
        elif d.get("rec") == "data":  # WPILOG: entries that are started, at or after time zero
            if d["name"] is None or d["ts"] < 0 or "invalid" in d:
                continue
            row = {"json": as_object(d["decoded"])} if "decoded" in d else {"value": d["value"]}
            # A time past what i64 nanoseconds hold (2^56 us in the WPILib sample) saturates.
            tables.setdefault(d["name"], []).append((min(d["ts"] * 1000, 2**63 - 1), row))
        elif d.get("kind") == "data" and "msg_id" in d:  # ULog: a table per subscription
            name = d["name"] if d["multi_id"] == 0 else "%s.%d" % (d["name"], d["multi_id"])
            tables.setdefault(name, []).append((d["timestamp"] * 1000, d["data"]))
        elif d.get("kind") == "message":  # ROS
            c = conns[d["conn"]]
            first = topic_type.setdefault(c["topic"], c["type"])
            name = c["topic"] if c["type"] == first else "%s#%s" % (c["topic"], c["type"])
            t = d["time"]["sec"] * 1_000_000_000 + d["time"]["nsec"]
            tables.setdefault(name, []).append((t, d["data"]))
    return tables, out.returncode


def as_object(v):
    """A decoded struct value as the sample source delivers it: an object, or `{"value": v}`."""
    return v if isinstance(v, dict) else {"value": v}


def same(a, e, typ, where):
    """Whether pyarrow's value `a` of Arrow type `typ` is the dump's JSON value `e`."""
    if e is None:
        return a is None or fail(where, a, e)
    if pa.types.is_struct(typ):
        names = [f.name for f in typ]
        if not isinstance(e, dict) or a is None:
            return fail(where, a, e)
        if names and names[0] == "variant" and "variant" in e:
            v = e["variant"]
            rest = {k: x for k, x in e.items() if k != "variant"}
            if a["variant"] != v:
                return fail(where + ".variant", a["variant"], v)
            for f in list(typ)[1:]:
                if f.name == v:
                    if not same(a[f.name], rest, f.type, where + "." + f.name):
                        return False
                elif a[f.name] is not None:
                    return fail(where + "." + f.name, a[f.name], None)
            return v in names or not rest or fail(where, a, e)
        consumed = set()
        for f in typ:
            sub = where + "." + f.name
            if is_union(f.type) and not (isinstance(e.get(f.name), dict) and "variant" in e[f.name]):
                # CARLA's dump shows a variant by its fields alone, in the enclosing object.
                u = a[f.name]
                if u is None:
                    return fail(sub, u, e.get(f.name))
                for g in list(f.type)[1:]:
                    if g.name != u["variant"]:
                        continue
                    for h in g.type:
                        if h.name not in e:
                            return fail(sub + "." + h.name, u[g.name][h.name], "<missing>")
                        if not same(u[g.name][h.name], e[h.name], h.type, sub + "." + h.name):
                            return False
                        consumed.add(h.name)
                continue
            if f.name not in e:
                return fail(sub, a[f.name], "<missing>")
            if not same(a[f.name], e[f.name], f.type, sub):
                return False
            consumed.add(f.name)
        for k in set(e) - consumed:
            # Only what Parquet cannot hold may be left out: an empty struct.
            if e[k] != {}:
                return fail(where + "." + k, "<no column>", e[k])
        return True
    if pa.types.is_list(typ):
        if not isinstance(e, list) or a is None or len(a) != len(e):
            return fail(where, a, e)
        return all(same(x, y, typ.value_type, "%s[%d]" % (where, i)) for i, (x, y) in enumerate(zip(a, e)))
    if pa.types.is_binary(typ):
        return (isinstance(a, bytes) and a.hex() == e) or fail(where, a, e)
    if pa.types.is_floating(typ):
        if isinstance(e, str):
            ok = (e == "-0" and a == 0 and math.copysign(1.0, a) < 0) or (e == "NaN" and a is not None and math.isnan(a)) or (e == "Infinity" and a == math.inf) or (e == "-Infinity" and a == -math.inf)
            return ok or fail(where, a, e)
        return (isinstance(e, (int, float)) and not isinstance(e, bool) and a == e) or fail(where, a, e)
    if pa.types.is_boolean(typ):
        return (a is e) or fail(where, a, e)
    if pa.types.is_integer(typ):
        return (isinstance(e, int) and not isinstance(e, bool) and a == e) or fail(where, a, e)
    if pa.types.is_string(typ) and isinstance(e, dict) and list(e) == ["$hex"]:
        # Text that is not UTF-8 (a ULog `char[N]`): a string column cannot hold it; null, with
        # a warning (docs/parquet.md).
        return a is None or fail(where, a, e)
    if pa.types.is_string(typ) and not isinstance(e, str):
        # A column of JSON text (values without a type description, such as decoded structs).
        return (a is not None and json.loads(a) == e) or fail(where, a, e)
    if pa.types.is_string(typ):
        return a == e or fail(where, a, e)
    return fail(where, "<unexpected type %s>" % typ, e)


FAILURES = []


def is_union(typ):
    return pa.types.is_struct(typ) and typ.num_fields > 0 and typ.field(0).name == "variant"


def fail(where, a, e):
    FAILURES.append("%s: parquet has %r, dump has %r" % (where, a, e))
    return False


def usvlog_units(root):
    """{record name: {field: unit}} from schemas/usvlog.toml."""
    with open(os.path.join(root, "schemas", "usvlog.toml"), "rb") as f:
        s = tomllib.load(f)
    units = {}
    for r in s.get("record", []):
        units[r["name"]] = {f["name"]: f["unit"] for f in r.get("fields", []) if "unit" in f}
    return units


# The documented mapping (docs/parquet.md), on fields of every format: (table, log, column,
# Arrow type, field metadata that must be there).
TYPES = [
    ("REC_NAV_SOLUTION", "step", "x", "float", {"unit": "m", "doc": "North position."}),
    ("REC_ACTUATOR_REQ", "step", "src", "uint8", {"enum": "0=AUTOPILOT,1=MANUAL,2=TEST", "type": "ActSrc"}),
    ("REC_NAV_SOLUTION", "step", "log_time", "timestamp[ns]", {}),
    ("DoubleArr", "gen_akit_head_r2_alltypes", "value", "list<item: double>", {}),
    ("Raw", "gen_akit_head_r2_alltypes", "value", "binary", {}),
    ("Double", "gen_akit_head_r2_alltypes", "value", "double", {}),
    ("TypeChange%23string", "gen_akit_v1.8.1_r1_alltypes", "value", "string", {}),
    ("pose", "test_none", "header", "struct<seq: uint32, stamp: struct<sec: uint32, nsec: uint32>, frame_id: string>", {}),
    ("pose", "test_none", "log_time", "timestamp[ns, tz=UTC]", {}),
    ("everything", "test_none", "fixed_strings", "list<item: string>", {}),
    ("everything", "test_none", "d", "struct<sec: int32, nsec: int32>", {}),
    ("EventAdd", "878-supp-mat_crash", "db_id", "uint32", {}),
    ("EventAdd", "878-supp-mat_crash", "location", "struct<x: float, y: float, z: float>", {}),
]


def check_types(out):
    for table, log, column, want, meta in TYPES:
        part = os.path.join(out, table, "log=" + log, "part-0.parquet")
        if not os.path.exists(part):
            continue
        f = pq.read_schema(part).field(column)
        if str(f.type) != want:
            FAILURES.append("%s: %s is %s, the documented type is %s" % (part, column, f.type, want))
        have = {k.decode(): v.decode() for k, v in (f.metadata or {}).items()}
        for k, v in meta.items():
            if have.get(k) != v:
                FAILURES.append("%s: %s metadata %s is %r, expected %r" % (part, column, k, have.get(k), v))


def main():
    logspec, out, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    units = usvlog_units(root)
    tables_checked = rows_checked = 0
    for path in files:
        log = escape(os.path.splitext(os.path.basename(path))[0])
        expected, _ = expected_rows(logspec, path)
        written = set()
        for table in os.listdir(out):
            if os.path.exists(os.path.join(out, table, "log=" + log, "part-0.parquet")):
                written.add(table)
        want = {table_dir(n): n for n in expected}
        if set(want) != written:
            FAILURES.append("%s: tables %s, expected %s" % (path, sorted(written), sorted(want)))
        for tdir, name in sorted(want.items()):
            part = os.path.join(out, tdir, "log=" + log, "part-0.parquet")
            if not os.path.exists(part):
                continue
            pf = pq.ParquetFile(part)
            meta = {k.decode(): v.decode() for k, v in pf.metadata.metadata.items() if not k.startswith(b"ARROW")}
            for k in ("logspec.version", "logspec.source", "logspec.format"):
                if k not in meta:
                    FAILURES.append("%s: file metadata lacks %s" % (part, k))
            if meta.get("logspec.source") != os.path.basename(path) or meta.get("logspec.table") != name:
                FAILURES.append("%s: file metadata %r" % (part, meta))
            t = pf.read()
            schema = t.schema
            if schema.field("log_time").type.unit != "ns" or schema.field("log_elapsed_ns").type != pa.int64():
                FAILURES.append("%s: time columns %s" % (part, schema))
            rows = expected[name]
            if t.num_rows != len(rows):
                FAILURES.append("%s: %d rows, dump has %d" % (part, t.num_rows, len(rows)))
                continue
            times = t.column("log_time").cast(pa.int64()).to_pylist()
            got = t.drop_columns(["log_time", "log_elapsed_ns"])
            body = pa.struct(list(got.schema))
            for i, (row, (t_ns, e)) in enumerate(zip(got.to_pylist(), rows)):
                where = "%s row %d" % (part, i)
                if times[i] != t_ns:
                    fail(where + " log_time", times[i], t_ns)
                if not same(row, e, body, where):
                    break
                rows_checked += 1
            if meta.get("logspec.format") == "usvlog":
                for f in got.schema:
                    want_unit = units.get(name, {}).get(f.name)
                    have = (f.metadata or {}).get(b"unit", b"").decode() or None
                    if want_unit != have:
                        FAILURES.append("%s: %s.%s has unit %r, the schema says %r" % (part, name, f.name, have, want_unit))
            tables_checked += 1
    check_types(out)
    if FAILURES:
        print("\n".join(FAILURES[:40]))
        print("%d failure(s)" % len(FAILURES))
        sys.exit(1)
    print("checked %d tables, %d rows from %d logs" % (tables_checked, rows_checked, len(files)))


main()
