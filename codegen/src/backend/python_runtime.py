
# ---------------------------------------------------------------------------------------------
# Reader and writer. This part is the same in every generated module; the tables at the end of
# the file are the schema. Standard library only; numpy is used when asked for and installed.
# ---------------------------------------------------------------------------------------------

import collections as _collections
import json as _json
import math as _math
import os as _os
import struct as _struct


class DecodeError(ValueError):
    """The input does not match the layout.

    Every complete record before the fault has already been yielded (or, from `read`, is kept in
    `partial`). The attributes say where: `path`, `offset` (byte offset in the file), `record_index`
    (0-based, in file order), `record` (the record's name), `field`.
    """

    def __init__(self, path, offset, message, record_index=None, record=None, field=None):
        self.path = path
        self.offset = offset
        self.record_index = record_index
        self.record = record
        self.field = field
        self.partial = None
        where = "%s: byte %d" % (path, offset)
        if record_index is not None:
            where += ": record #%d" % record_index
        if record is not None:
            where += " (%s)" % record
        if field is not None:
            where += ", field %s" % field
        ValueError.__init__(self, "%s: %s" % (where, message))


class _Bad(Exception):
    """A fault inside a payload; the record loop adds the file, offset and record to it."""

    def __init__(self, pos, field, message):
        Exception.__init__(self, message)
        self.pos = pos
        self.field = field
        self.message = message


# A record as read: `fields` is a dict in wire order, or None for a record type this module does
# not know, whose raw `payload` is kept instead (known records have `payload` None).
Record = _collections.namedtuple("Record", "offset index timestamp type name fields payload")

# Everything `read` returns. `columns[name][field]` is a list (or numpy array) of that field's
# values in file order; the timestamp is a column too. `unknown` lists (timestamp, type, len).
Log = _collections.namedtuple("Log", "header columns counts unknown records_total bytes_consumed")

_PACKERS = {}
_CHUNK = 1 << 20


def _st(code):
    s = _PACKERS.get(code)
    if s is None:
        s = _PACKERS[code] = _struct.Struct(code)
    return s


def _read_exact(f, n):
    """Reads `n` bytes, or fewer at the end of the input, asking for at most 1 MiB at a time so that
    a corrupt length can never make us allocate more than the input holds."""
    if n <= _CHUNK:
        return f.read(n)
    parts = []
    left = n
    while left:
        b = f.read(min(left, _CHUNK))
        if not b:
            break
        parts.append(b)
        left -= len(b)
    return b"".join(parts)


def _size(ty):
    """The fixed encoded size of a type descriptor, or None."""
    k = ty[0]
    if k in ("p", "enum", "flags"):
        return _st(ty[1]).size
    if k == "bool":
        return 1
    if k == "pad":
        return ty[1]
    if k in ("bytes", "str"):
        return ty[1][1] if ty[1][0] == "fixed" else None
    if k == "array":
        e = _size(ty[1])
        return e * ty[2][1] if e is not None and ty[2][0] == "fixed" else None
    if k == "struct":
        return STRUCTS[ty[1]][0]
    return None


def _min_size(ty):
    """The fewest bytes one value can take: bounds an element count before anything is allocated."""
    s = _size(ty)
    if s is not None:
        return s
    k = ty[0]
    if k in ("bytes", "str", "array"):
        ln = ty[1] if k != "array" else ty[2]
        return _st(ln[1]).size if ln[0] in ("count", "size") else 0
    if k in ("struct", "union"):
        return MIN_SIZES[ty[1]]
    return 0


def _fast(fields):
    """A single `struct.Struct` for a list of fields, when every field is a number, bool, pad or
    fixed byte string in one byte order; None otherwise."""
    orders = set()
    codes = []
    names = []
    for name, ty, _const in fields:
        k = ty[0]
        if k in ("p", "enum", "flags"):
            orders.add(ty[1][0])
            codes.append(ty[1][1:])
            names.append(name)
        elif k == "bool":
            codes.append("?")
            names.append(name)
        elif k == "pad":
            codes.append("%dx" % ty[1])
        elif k == "bytes" and ty[1][0] == "fixed":
            codes.append("%ds" % ty[1][1])
            names.append(name)
        else:
            return None
    if len(orders) > 1:
        return None
    return _st((orders.pop() if orders else "<") + "".join(codes)), tuple(names)


def _check_const(name, const, value, pos):
    if const is not None and value != const:
        raise _Bad(pos, name, "expected %r, found %r" % (const, value))


def _length(ln, buf, pos, end, field, esize):
    """Element count of a sequence and the position after its prefix."""
    k = ln[0]
    if k == "fixed":
        return ln[1], pos
    if k == "rest":
        if esize and (end - pos) % esize:
            raise _Bad(pos, field, "%d bytes left, not a whole number of %d-byte elements" % (end - pos, esize))
        return ((end - pos) // esize if esize else None), pos
    s = _st(ln[1])
    if pos + s.size > end:
        raise _Bad(pos, field, "length prefix needs %d bytes, found %d" % (s.size, end - pos))
    n = s.unpack_from(buf, pos)[0]
    pos += s.size
    if k == "size":
        if not esize or n % esize:
            raise _Bad(pos, field, "byte size %d is not a whole number of %s-byte elements" % (n, esize))
        n //= esize
    return n, pos


def _dec(ty, buf, pos, end, scope, field):
    k = ty[0]
    if k in ("p", "enum", "flags"):
        s = _st(ty[1])
        if pos + s.size > end:
            raise _Bad(pos, field, "needs %d bytes, found %d" % (s.size, end - pos))
        return s.unpack_from(buf, pos)[0], pos + s.size
    if k == "bool":
        if pos >= end:
            raise _Bad(pos, field, "needs 1 byte, found 0")
        return buf[pos] != 0, pos + 1
    if k == "pad":
        if pos + ty[1] > end:
            raise _Bad(pos, field, "needs %d pad bytes, found %d" % (ty[1], end - pos))
        return None, pos + ty[1]
    if k in ("bytes", "str"):
        n, pos = _length(ty[1], buf, pos, end, field, 1)
        if pos + n > end:
            raise _Bad(pos, field, "needs %d bytes, found %d" % (n, end - pos))
        raw = bytes(buf[pos:pos + n])
        if k == "bytes":
            return raw, pos + n
        if ty[1][0] == "fixed":
            raw = raw.split(b"\0", 1)[0]
        try:
            return raw.decode("utf-8"), pos + n
        except UnicodeDecodeError as e:
            raise _Bad(pos + e.start, field, "invalid UTF-8: %s" % e.reason)
    if k == "array":
        elem = ty[1]
        esize = _size(elem)
        n, pos = _length(ty[2], buf, pos, end, field, esize)
        out = []
        if n is None:
            # Variable-size elements up to the end of the payload.
            while pos < end:
                v, pos = _dec(elem, buf, pos, end, scope, field)
                out.append(v)
            return out, pos
        least = _min_size(elem)
        if least and n * least > end - pos:
            raise _Bad(pos, field, "%d elements need at least %d bytes, found %d" % (n, n * least, end - pos))
        for _ in range(n):
            v, pos = _dec(elem, buf, pos, end, scope, field)
            out.append(v)
        return out, pos
    if k == "struct":
        return _dec_fields(STRUCTS[ty[1]][1], buf, pos, end)
    if k == "varint":
        _k, size, signed, big, wf, lo, bits = ty
        n = ((scope.get(wf, 0) >> lo) & ((1 << bits) - 1)) + 1
        if pos + n > end:
            raise _Bad(pos, field, "needs %d bytes, found %d" % (n, end - pos))
        v = int.from_bytes(buf[pos:pos + n], "big" if big else "little")
        if signed and v >> (8 * size - 1):
            v -= 1 << (8 * size)
        return v, pos + n
    if k == "union":
        by_name, variants = UNIONS[ty[1]]
        tag = scope.get(ty[2])
        v = None if by_name else variants.get(tag)
        if v is None:
            raise _Bad(pos, field, "no %s variant for %s %r" % (ty[1], ty[2], tag))
        body, pos = _dec_fields(v[1], buf, pos, end)
        out = {"variant": v[0]}
        out.update(body)
        return out, pos
    raise _Bad(pos, field, "type %r has no Python layout" % (ty,))


def _dec_fields(fields, buf, pos, end):
    out = {}
    for name, ty, const in fields:
        at = pos
        v, pos = _dec(ty, buf, pos, end, out, name)
        if ty[0] != "pad":
            _check_const(name, const, v, at)
            out[name] = v
    return out, pos


def _decoder(struct_name):
    """A function `(buf, pos, end) -> (dict, pos)` for a struct, fast when the layout allows."""
    size, fields = STRUCTS[struct_name]
    fast = _fast(fields)
    consts = [(n, c) for n, _t, c in fields if c is not None]
    if fast is None:
        return lambda buf, pos, end: _dec_fields(fields, buf, pos, end)
    s, names = fast

    def decode(buf, pos, end):
        if pos + s.size > end:
            raise _Bad(pos, None, "needs %d bytes, found %d" % (s.size, end - pos))
        out = dict(zip(names, s.unpack_from(buf, pos)))
        for n, c in consts:
            _check_const(n, c, out[n], pos)
        return out, pos + s.size

    return decode


def _enc(ty, value, out, scope, field):
    k = ty[0]
    if k in ("p", "enum", "flags"):
        out += _st(ty[1]).pack(value)
    elif k == "bool":
        out.append(1 if value else 0)
    elif k == "pad":
        out += bytes(ty[1])
    elif k in ("bytes", "str"):
        raw = value.encode("utf-8") if k == "str" else bytes(value)
        ln = ty[1]
        if ln[0] == "fixed":
            if len(raw) > ln[1]:
                raise ValueError("%s: %d bytes do not fit in %d" % (field, len(raw), ln[1]))
            raw = raw + bytes(ln[1] - len(raw))
        elif ln[0] in ("count", "size"):
            out += _st(ln[1]).pack(len(raw))
        out += raw
    elif k == "array":
        ln = ty[2]
        if ln[0] == "fixed" and len(value) != ln[1]:
            raise ValueError("%s: expected %d elements, found %d" % (field, ln[1], len(value)))
        if ln[0] == "count":
            out += _st(ln[1]).pack(len(value))
        elif ln[0] == "size":
            out += _st(ln[1]).pack(len(value) * _size(ty[1]))
        for v in value:
            _enc(ty[1], v, out, scope, field)
    elif k == "struct":
        _enc_fields(STRUCTS[ty[1]][1], value, out)
    elif k == "varint":
        _k, size, signed, big, wf, lo, bits = ty
        n = ((scope.get(wf, 0) >> lo) & ((1 << bits) - 1)) + 1
        raw = value + (1 << (8 * size)) if value < 0 else value
        if raw >> (8 * n):
            raise ValueError("%s: %d does not fit the %d bytes its width field %s announces" % (field, value, n, wf))
        out += raw.to_bytes(n, "big" if big else "little")
    elif k == "union":
        by_name, variants = UNIONS[ty[1]]
        v = None if by_name else variants.get(scope.get(ty[2]))
        if v is None or v[0] != value.get("variant"):
            raise ValueError("%s: the variant does not match %s" % (field, ty[2]))
        _enc_fields(v[1], value, out)
    else:
        raise ValueError("%s: type %r has no Python layout" % (field, ty))


def _enc_fields(fields, values, out):
    for name, ty, const in fields:
        if ty[0] == "pad":
            _enc(ty, None, out, values, name)
        else:
            _enc(ty, values[name] if const is None or name in values else const, out, values, name)


def encode_struct(struct_name, values):
    """The wire bytes of a struct (a record payload, the file header, ...) from a dict of field
    values; constant fields may be left out."""
    out = bytearray()
    _enc_fields(STRUCTS[struct_name][1], values, out)
    return bytes(out)


def decode_struct(struct_name, data):
    """The field values of a struct's wire bytes. Raises ValueError when `data` is not exactly one
    value of the struct."""
    try:
        values, pos = _decoder(struct_name)(data, 0, len(data))
    except _Bad as e:
        raise ValueError("%s: byte %d%s: %s" % (struct_name, e.pos, ", field %s" % e.field if e.field else "", e.message))
    if pos != len(data):
        raise ValueError("%s: %d bytes left over after the last field" % (struct_name, len(data) - pos))
    return values


def encode_record(record_id, values, timestamp=0):
    """One framed record (record header and payload) as bytes, ready to append to a file."""
    body = RECORDS[record_id][1]
    payload = encode_struct(body, values)
    header = {FRAMING["tag"]: record_id}
    if FRAMING["length"] is not None:
        header[FRAMING["length"]] = len(payload)
    if FRAMING["timestamp"] is not None:
        header[FRAMING["timestamp"]] = timestamp
    return encode_struct(FRAMING["header"], header) + payload


class Reader(object):
    """Streams the records of a file (a path, or a binary file object) in file order, in constant
    memory. `header` holds the file header's fields; iterate for `Record`s. Raises `DecodeError`
    after yielding every complete record before a fault.

    `strict` (the default) rejects a known record whose length differs from its layout's size;
    with `strict=False` such a record is yielded with `fields` None and its raw `payload`."""

    def __init__(self, source, strict=True):
        if isinstance(source, (str, bytes, _os.PathLike)):
            self.path = _os.fsdecode(source)
            self._file = open(source, "rb")
            self._own = True
        else:
            self.path = getattr(source, "name", "<stream>")
            self._file = source
            self._own = False
        self.strict = strict
        self.offset = 0
        self.index = 0
        self.header = None
        try:
            self._read_file_header()
        except BaseException:
            self.close()
            raise

    def close(self):
        if self._own:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read_file_header(self):
        if FILE_HEADER is None:
            return
        size = STRUCTS[FILE_HEADER][0]
        raw = _read_exact(self._file, size)
        if len(raw) < size:
            raise DecodeError(self.path, 0, "the file is %d bytes, shorter than the %d-byte %s" % (len(raw), size, FILE_HEADER))
        try:
            self.header, _ = _decoder(FILE_HEADER)(raw, 0, size)
        except _Bad as e:
            raise DecodeError(self.path, e.pos, "%s: %s" % (FILE_HEADER, e.message), field=e.field)
        if SCHEMA_ID_FIELD is not None and self.header[SCHEMA_ID_FIELD] != SCHEMA_ID:
            raise DecodeError(
                self.path, 0, "%s %r is not one this reader knows (%d); regenerate the module from the matching schema"
                % (SCHEMA_ID_FIELD, self.header[SCHEMA_ID_FIELD], SCHEMA_ID), field=SCHEMA_ID_FIELD)
        self.offset = size

    def __iter__(self):
        f = self._file
        hsize = STRUCTS[FRAMING["header"]][0]
        hdec = _decoder(FRAMING["header"])
        tag_f, len_f, ts_f = FRAMING["tag"], FRAMING["length"], FRAMING["timestamp"]
        decoders = {}
        while True:
            start = self.offset
            raw = _read_exact(f, hsize)
            if not raw:
                return
            if len(raw) < hsize:
                raise DecodeError(self.path, start, "truncated record header: %d of %d bytes" % (len(raw), hsize), self.index)
            try:
                h, _ = hdec(raw, 0, hsize)
            except _Bad as e:
                raise DecodeError(self.path, start + e.pos, "record header: %s" % e.message, self.index, field=e.field)
            tag = h[tag_f]
            rec = RECORDS.get(tag)
            name = rec[0] if rec else None
            if len_f is not None:
                n = h[len_f]
            elif rec is not None and rec[2] is not None:
                n = rec[2]
            else:
                raise DecodeError(self.path, start, "record type %r is %s and the framing has no length field to skip it by"
                                  % (tag, "unknown" if rec is None else "of variable size"), self.index, name)
            payload = _read_exact(f, n)
            if len(payload) < n:
                raise DecodeError(self.path, start, "truncated payload: %d of %d bytes" % (len(payload), n), self.index, name)
            self.offset = start + hsize + n
            ts = h[ts_f] if ts_f is not None else None
            index = self.index
            self.index += 1
            if rec is None:
                yield Record(start, index, ts, tag, None, None, payload)
                continue
            if rec[2] is not None and n != rec[2]:
                if self.strict:
                    raise DecodeError(self.path, start, "payload length %d, expected %d" % (n, rec[2]), index, name)
                yield Record(start, index, ts, tag, name, None, payload)
                continue
            dec = decoders.get(tag)
            if dec is None:
                dec = decoders[tag] = _decoder(rec[1])
            try:
                fields, end = dec(payload, 0, n)
            except _Bad as e:
                raise DecodeError(self.path, start + hsize + e.pos, e.message, index, name, e.field)
            if end != n:
                raise DecodeError(self.path, start + hsize + end, "%d payload bytes left after the last field" % (n - end), index, name)
            yield Record(start, index, ts, tag, name, fields, None)


def read(source, numpy=False, strict=True):
    """Reads a whole file into per-record-type columns (the shape of upstream's
    `read_timeseries_bin`). With `numpy=True`, numeric columns are numpy arrays (needs numpy).
    On a fault, raises `DecodeError` whose `partial` holds everything read before it."""
    if numpy:
        try:
            import numpy as np
        except ImportError:
            raise ImportError("read(..., numpy=True) needs numpy; install it or use numpy=False for lists")
    columns = {}
    counts = {}
    unknown = []
    ts_f = FRAMING["timestamp"] or "timestamp"
    total = 0
    reader = Reader(source, strict)

    def dtype(ty):
        # The wire type's own width: float32 stays float32, u16 stays uint16.
        if ty[0] in ("p", "enum", "flags"):
            return np.dtype("=" + ty[1][1:])
        return np.bool_ if ty[0] == "bool" else None

    def result():
        cols = columns
        if numpy:
            header_types = {n: t for n, t, _c in STRUCTS[FRAMING["header"]][1]}
            cols = {}
            for name, body, _size, _fp in RECORDS.values():
                if name in columns:
                    types = {ts_f: header_types.get(ts_f)}
                    types.update((n, t) for n, t, _c in STRUCTS[body][1])
                    cols[name] = {k: np.asarray(v, dtype=types[k] and dtype(types[k])) for k, v in columns[name].items()}
        return Log(reader.header, cols, counts, unknown, total, reader.offset)

    with reader:
        try:
            for r in reader:
                total += 1
                if r.fields is None:
                    unknown.append((r.timestamp, r.type, len(r.payload)))
                    continue
                counts[r.name] = counts.get(r.name, 0) + 1
                cols = columns.get(r.name)
                if cols is None:
                    cols = columns[r.name] = {ts_f: []}
                    for k in r.fields:
                        cols[k] = []
                cols[ts_f].append(r.timestamp)
                for k, v in r.fields.items():
                    cols[k].append(v)
        except DecodeError as e:
            e.partial = result()
            raise
        return result()


def _json_value(v):
    if isinstance(v, float):
        if _math.isnan(v):
            return "NaN"
        if _math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, dict):
        return {k: _json_value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_json_value(x) for x in v]
    return v


def record_json(r):
    """A record as the JSON object `logspec dump` prints for it."""
    obj = {}
    if FRAMING["timestamp"] is not None:
        obj[FRAMING["timestamp"]] = r.timestamp
    obj[FRAMING["tag"]] = r.type
    if r.fields is None:
        obj["name"] = None
        obj[FRAMING["length"] or "len"] = len(r.payload)
        obj["payload_hex"] = r.payload.hex()
    else:
        obj["name"] = r.name
        obj["fields"] = _json_value(r.fields)
    return obj


def _from_json(ty, v):
    """A value as JSON holds it (bytes as hex) turned back into what `encode_struct` takes."""
    k = ty[0]
    if k == "bytes":
        return bytes.fromhex(v)
    if k == "array":
        return [_from_json(ty[1], x) for x in v]
    if k == "struct":
        return {n: _from_json(t, v[n]) for n, t, _c in STRUCTS[ty[1]][1] if t[0] != "pad"}
    return v


def check_golden(path):
    """Checks the golden vectors of `golden/<format>.json`: each vector's values must encode to its
    bytes, and its bytes decode to its values. Returns how many were checked; raises
    AssertionError naming the first struct that disagrees."""
    with open(path) as f:
        doc = _json.load(f)
    n = 0
    for v in doc["vectors"]:
        name = v["struct"]
        want = bytes.fromhex(v["bytes"])
        got = encode_struct(name, _from_json(("struct", name), v["values"]))
        if got != want:
            raise AssertionError("%s: the values encode to %s, the golden bytes are %s" % (name, got.hex(), want.hex()))
        back = _json_value(decode_struct(name, want))
        if back != v["values"]:
            raise AssertionError("%s: the bytes decode to %r, the golden values are %r" % (name, back, v["values"]))
        n += 1
    return n


def main(argv=None):
    import argparse
    import sys
    p = argparse.ArgumentParser(
        prog="python3 %s.py" % FORMAT,
        description="Read a %s file with the generated layout (standard library only)." % FORMAT,
        epilog="example: python3 %s.py dump FILE | head" % FORMAT)
    sub = p.add_subparsers(dest="verb", required=True)
    d = sub.add_parser("dump", help="print every record as JSON Lines, in file order (as `logspec dump`)")
    d.add_argument("file")
    s = sub.add_parser("summary", help="print the header and record counts as JSON")
    s.add_argument("file")
    g = sub.add_parser("golden", help="check golden vectors (golden/%s.json) against this module" % FORMAT)
    g.add_argument("file")
    args = p.parse_args(argv)
    try:
        if args.verb == "dump":
            out = sys.stdout
            with Reader(args.file) as r:
                for rec in r:
                    out.write(_json.dumps(record_json(rec), separators=(",", ":"), ensure_ascii=False))
                    out.write("\n")
        elif args.verb == "golden":
            print("%d golden vectors agree" % check_golden(args.file))
        else:
            log = read(args.file)
            print(_json.dumps({
                "header": _json_value(log.header),
                "records_total": log.records_total,
                "record_counts": log.counts,
                "unknown_records": [list(u) for u in log.unknown],
                "bytes_consumed": log.bytes_consumed,
            }, indent=1))
    except BrokenPipeError:
        # A closed pipe (`| head`) is how a reader says it has seen enough.
        sys.stdout = None
        return 0
    except (DecodeError, OSError, AssertionError, ValueError) as e:
        sys.stdout.flush()
        sys.stderr.write("%s: %s\n" % (FORMAT, e))
        return 1
    return 0
