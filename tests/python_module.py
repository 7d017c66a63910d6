"""Checks of the generated `python/usvlog.py`, run by `tests/external/python_module.rs` with `python/` on the
module path. Each verb prints `ok ...` or fails with an AssertionError naming what differs.

  columns FILE NUMPY SUMMARY JSONL...  `read_usvlog` (NUMPY 1: numpy arrays; 0: lists, with numpy
                                       made unimportable) equals every JSON Lines dump given (the
                                       reference reader's and `logspec dump`'s) value for value,
                                       and the reference summary's counts, unknowns and sizes
  faults FILE NUMPY                    cut, corrupted and re-lengthed copies of FILE: `read` gives
                                       the same records, columns and error as the streaming `Reader`
  floats                               reads hex f64 bit patterns on stdin, prints how the module
                                       spells each one in JSON
"""
import io
import json
import random
import struct
import sys


def block_numpy():
    # An entry of None in sys.modules makes `import numpy` raise ImportError: the module must work
    # as on a machine without numpy.
    sys.modules["numpy"] = None


def plain(col):
    return col.tolist() if hasattr(col, "tolist") else col


def columns_of(records, ts="t_us"):
    """Reference columns from (timestamp, type, name, fields or None, payload length) tuples."""
    cols, counts, unknown = {}, {}, []
    for t, typ, name, fields, n in records:
        if fields is None:
            unknown.append([t, typ, n])
            continue
        counts[name] = counts.get(name, 0) + 1
        c = cols.setdefault(name, {ts: []})
        c[ts].append(t)
        for k, v in fields.items():
            c.setdefault(k, []).append(v)
    return cols, counts, unknown


def from_jsonl(path):
    recs = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["name"] is None:
                recs.append((r["t_us"], r["type"], None, None, r["len"]))
            else:
                recs.append((r["t_us"], r["type"], r["name"], r["fields"], None))
    return recs


def same_log(log, cols, counts, unknown, what):
    assert list(log.columns) == [n for n in log.counts], what
    assert log.counts == counts, (what, log.counts, counts)
    assert [list(u) for u in log.unknown] == unknown, (what, log.unknown, unknown)
    assert log.records_total == sum(counts.values()) + len(unknown), what
    assert set(log.columns) == set(cols), (what, sorted(log.columns), sorted(cols))
    n = 0
    for name, c in cols.items():
        got = log.columns[name]
        assert list(got) == list(c), (what, name, list(got), list(c))
        for k, v in c.items():
            g = plain(got[k])
            if g != v:
                i = next(i for i, (a, b) in enumerate(zip(g, v)) if a != b) if len(g) == len(v) else None
                raise AssertionError("%s: %s.%s differs (lengths %d, %d; first at %r: %r vs %r)" % (
                    what, name, k, len(g), len(v), i, g[i] if i is not None else None,
                    v[i] if i is not None else None))
            n += len(v)
    return n


def wire_dtypes(usvlog, log):
    """With numpy, every column is an array of the field's wire type."""
    import numpy as np
    header = {n: t for n, t, _c in usvlog.STRUCTS[usvlog.FRAMING["header"]][1]}
    # The layouts of the file's schema id (an older one's, from the lock file, or the current).
    records = usvlog.LAYOUTS[log.header[usvlog.SCHEMA_ID_FIELD]]
    for tag, (name, body, _size, _fp) in records.items():
        if name not in log.columns:
            continue
        types = {"t_us": header["t_us"]}
        types.update((n, t) for n, t, _c in usvlog.STRUCTS[body][1] if t[0] != "pad")
        assert list(log.columns[name]) == list(types), (name, list(log.columns[name]))
        for k, ty in types.items():
            col = log.columns[name][k]
            assert isinstance(col, np.ndarray), (name, k, type(col))
            want = np.dtype("=" + ty[1][1:])
            assert col.dtype == want, (name, k, col.dtype, want)
            assert col.flags["C_CONTIGUOUS"], (name, k)


def cmd_columns(path, numpy, summary, *jsonls):
    numpy = numpy == "1"
    if not numpy:
        block_numpy()
    import usvlog
    log = usvlog.read_usvlog(path, numpy=numpy)
    if numpy:
        wire_dtypes(usvlog, log)
    else:
        assert all(type(v) is list for c in log.columns.values() for v in c.values())
        try:
            usvlog.read_usvlog(path, numpy=True)
            raise AssertionError("numpy=True without numpy should raise ImportError")
        except ImportError as e:
            assert "needs numpy" in str(e), str(e)
    with open(summary) as f:
        s = json.load(f)
    assert list(log.counts.items()) == list(s["record_counts"].items()), (log.counts, s["record_counts"])
    assert log.records_total == s["records_total"]
    assert log.bytes_consumed == s["bytes_consumed"]
    assert [list(u) for u in log.unknown] == s["unknown_records"]
    assert log.header["magic"].decode() == s["header"]["magic"]
    assert log.header["fw_model_schema"] == s["header"]["fw_model_schema"]
    assert log.header["t0_us"] == s["header"]["t0_us"]
    n = 0
    for j in jsonls:
        cols, counts, unknown = columns_of(from_jsonl(j))
        n += same_log(log, cols, counts, unknown, j)
    print("ok", n)


def stream(usvlog, data, strict):
    """What the streaming Reader makes of `data`: its records, and its error (or None)."""
    recs = []
    err = None
    offset = None
    try:
        with usvlog.Reader(io.BytesIO(data), strict) as r:
            try:
                for rec in r:
                    recs.append((rec.timestamp, rec.type, rec.name, rec.fields,
                                 None if rec.payload is None else len(rec.payload)))
            finally:
                offset = r.offset
    except usvlog.DecodeError as e:
        err = e
    return recs, err, offset


def cases(data):
    """Cut, corrupted and re-lengthed copies of `data` (seeded), and some made by hand."""
    rng = random.Random(20)
    starts = []
    pos = 32
    while pos + 12 <= len(data):
        starts.append(pos)
        pos += 12 + struct.unpack_from("<H", data, pos + 10)[0]
    yield data
    yield data[:20]
    yield data[:32]
    for cut in [len(data) - 1, len(data) - 5, len(data) - 13, starts[-1] + 3, starts[len(starts) // 2] + 7]:
        yield data[:cut]
    for _ in range(60):
        yield data[:rng.randrange(32, len(data))]
    for _ in range(120):
        b = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            b[rng.randrange(32, len(b))] = rng.randrange(256)
        yield bytes(b)
    for _ in range(60):
        # A record whose type or length field says something else: an unknown type, a known type
        # whose length differs from its layout, or a length that runs past the end.
        b = bytearray(data)
        at = rng.choice(starts)
        if rng.random() < 0.5:
            struct.pack_into("<H", b, at + 8, rng.choice([0, 14, 200, 65535, rng.randrange(1, 14)]))
        else:
            struct.pack_into("<H", b, at + 10, rng.choice([0, 1, 7, 24, 36, 65535]))
        yield bytes(b[:rng.choice([len(b), rng.randrange(at, len(b) + 1)])])
    # An unknown record inserted in the middle, kept and skipped by its length.
    mid = starts[len(starts) // 2]
    yield data[:mid] + struct.pack("<QHH", 7, 300, 5) + b"\x01\x02\x03\x04\x05" + data[mid:]


def cmd_faults(path, numpy):
    numpy = numpy == "1"
    if not numpy:
        block_numpy()
    import usvlog
    with open(path, "rb") as f:
        data = f.read()
    n = faults = 0
    for case in cases(data):
        for strict in (True, False):
            recs, err, offset = stream(usvlog, case, strict)
            what = "case %d (%d bytes, strict=%s)" % (n, len(case), strict)
            try:
                log = usvlog.read(io.BytesIO(case), numpy=numpy, strict=strict)
                got = None
            except usvlog.DecodeError as e:
                log, got = e.partial, e
            if err is None or got is None:
                assert err is None and got is None, (what, str(err), str(got))
            else:
                faults += 1
                assert str(got) == str(err), (what, str(got), str(err))
                assert (got.offset, got.record_index, got.record, got.field) == (
                    err.offset, err.record_index, err.record, err.field), what
            if log is None:
                # The file header itself is bad: there are no records to compare.
                assert err is not None and not recs, what
                continue
            cols, counts, unknown = columns_of(recs)
            same_log(log, cols, counts, unknown, what)
            assert log.bytes_consumed == offset, (what, log.bytes_consumed, offset)
            n += 1
    assert faults > 100, faults
    print("ok", n, faults)


def cmd_floats():
    import usvlog
    out = []
    for line in sys.stdin:
        v = struct.unpack("<d", bytes.fromhex(line.strip()))[0]
        out.append(usvlog._float_text(v))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    verb, args = sys.argv[1], sys.argv[2:]
    {"columns": cmd_columns, "faults": cmd_faults, "floats": cmd_floats}[verb](*args)
