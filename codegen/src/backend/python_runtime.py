
# ---------------------------------------------------------------------------------------------
# Reader and writer. This part is the same in every generated module; the tables at the end of
# the file are the schema. Standard library only; numpy is used when asked for and installed.
# ---------------------------------------------------------------------------------------------

import array as _array
import collections as _collections
import decimal as _decimal
import io as _io
import json as _json
import math as _math
import os as _os
import struct as _struct
import sys as _sys
from itertools import repeat as _repeat
from operator import add as _add


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
# not know, whose raw `payload` is kept instead (known records have `payload` None). Enum and
# flags fields are plain integers; the repr shows them by name (`src=ActSrc.MANUAL`), and
# `named_fields` gives the fields with names in place of the numbers.
class Record(_collections.namedtuple("Record", "offset index timestamp type name fields payload")):
    __slots__ = ()
    # The record layouts (a `LAYOUTS` entry) the record was read with; set per layout by `Reader`.
    _records = None

    def __repr__(self):
        fields = self.fields
        if fields is not None:
            fields = _named_record(self, True)
        return "Record(offset=%r, index=%r, timestamp=%r, type=%r, name=%r, fields=%r, payload=%r)" % (
            self.offset, self.index, self.timestamp, self.type, self.name, fields, self.payload)


class _Shown(str):
    """Text that a repr shows as it is, without quotes (`ActSrc.MANUAL`)."""

    def __repr__(self):
        return str(self)


_RECORD_CLASSES = {}


def _record_class(records):
    """The `Record` subclass of one record table: the same tuple, which knows its layouts."""
    cls = _RECORD_CLASSES.get(id(records))
    if cls is None:
        cls = _RECORD_CLASSES[id(records)] = type("Record", (Record,), {"__slots__": (), "_records": records})
    return cls


def _named(ty, v, shown):
    """A decoded value with its enum and flags numbers replaced by names: an enum value by its
    name (the number when the schema names none); a flags value by the list of the names of its
    set bits, with the number of the bits the schema names none last when there are any. With
    `shown`, as repr text instead: `ActSrc.MANUAL`, `ActSrc(7)`, `GnssStatus.VALID|GnssStatus.RTK`,
    `GnssStatus(0)`."""
    k = ty[0]
    if k == "enum":
        names = NAMED_VALUES.get(ty[2], {})
        cls = ty[2].rsplit(".", 1)[-1]
        n = names.get(v)
        if not shown:
            return v if n is None else n
        return _Shown("%s.%s" % (cls, n) if n is not None else "%s(%r)" % (cls, v))
    if k == "flags":
        names = NAMED_VALUES.get(ty[2], {})
        cls = ty[2].rsplit(".", 1)[-1]
        out = [n for bit, n in sorted(names.items()) if v & bit]
        rest = v & ~sum(bit for bit in names)
        if not shown:
            return out + [rest] if rest else out
        parts = ["%s.%s" % (cls, n) for n in out] + (["%s(%#x)" % (cls, rest)] if rest else [])
        return _Shown("|".join(parts) if parts else "%s(0)" % cls)
    if k == "array":
        return [_named(ty[1], x, shown) for x in v]
    if k == "struct":
        return _named_fields(STRUCTS[ty[1]][1], v, shown)
    if k == "union":
        variant = v.get("variant")
        for vname, vfields in UNIONS[ty[1]][1].values():
            if vname == variant:
                out = {"variant": variant}
                out.update(_named_fields(vfields, v, shown))
                return out
    return v


def _named_fields(fields, values, shown):
    out = {}
    for name, ty, _c in fields:
        if ty[0] != "pad" and name in values:
            out[name] = _named(ty, values[name], shown)
    return out


def _named_record(r, shown):
    records = r._records if r._records is not None else RECORDS
    return _named_fields(STRUCTS[records[r.type][1]][1], r.fields, shown)


def named_fields(record):
    """A record's fields with enum values by name and flags values as lists of the names of their
    set bits (see `_named`), e.g. `{"u_s_req": 0.5, "u_d_req": -0.5, "src": "MANUAL"}`; None for a
    record this module does not know. `Record.fields` keeps the numbers, as `logspec dump` prints
    them."""
    if record.fields is None:
        return None
    return _named_record(record, False)

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
    fixed byte string in one byte order (and, under natural alignment, every number one byte);
    None otherwise."""
    orders = set()
    codes = []
    names = []
    for name, ty, _const in fields:
        k = ty[0]
        if k in ("p", "enum", "flags"):
            if ALIGN and _st(ty[1]).size > 1:
                return None
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
    if ALIGN and s.size > 1:
        pos += (s.size - pos % s.size) % s.size
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
        if ALIGN and s.size > 1:
            pos += (s.size - pos % s.size) % s.size
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
        elif STRING_NUL and ty[1][0] in ("count", "size"):
            # The length counts the terminating NUL, which is not text (a length of 0 is "").
            raw = raw[:-1]
        try:
            return raw.decode("utf-8"), pos + n
        except UnicodeDecodeError as e:
            raise _Bad(pos + e.start, field, "invalid UTF-8: %s" % e.reason)
    if k == "array":
        elem = ty[1]
        esize = _size(elem)
        if ty[2][0] == "size" and esize is None:
            # Elements of a variable size within a byte length: as many as its span holds, the
            # last ending exactly at its end (an element that runs past it does not decode).
            n, pos = _length(("count", ty[2][1]), buf, pos, end, field, 1)
            if pos + n > end:
                raise _Bad(pos, field, "needs %d bytes, found %d" % (n, end - pos))
            span, out = pos + n, []
            while pos < span:
                v, pos = _dec(elem, buf, pos, span, scope, field)
                out.append(v)
            return out, pos
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


def _align(out, size):
    """Under natural alignment, the zero bytes that put a number of `size` bytes at a multiple of
    its size, counted from the start of the payload `out` holds."""
    if ALIGN and size > 1:
        out += bytes((size - len(out) % size) % size)


def _enc(ty, value, out, scope, field):
    k = ty[0]
    if k in ("p", "enum", "flags"):
        s = _st(ty[1])
        _align(out, s.size)
        out += s.pack(value)
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
            if STRING_NUL and k == "str":
                # The length counts a terminating NUL.
                raw += b"\0"
            _align(out, _st(ln[1]).size)
            out += _st(ln[1]).pack(len(raw))
        out += raw
    elif k == "array":
        ln = ty[2]
        if ln[0] == "fixed" and len(value) != ln[1]:
            raise ValueError("%s: expected %d elements, found %d" % (field, ln[1], len(value)))
        if ln[0] == "count":
            _align(out, _st(ln[1]).size)
            out += _st(ln[1]).pack(len(value))
        elif ln[0] == "size":
            _align(out, _st(ln[1]).size)
            if _size(ty[1]) is None:
                # Elements of a variable size: the prefix is their encoded bytes.
                body = bytearray()
                for v in value:
                    _enc(ty[1], v, body, scope, field)
                out += _st(ln[1]).pack(len(body))
                out += body
                return
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


def _end_padding(left):
    """Whether `left` bytes after a payload's last field are the padding natural alignment lets a
    payload end with (CDR writers pad to a multiple of 4: up to 3 bytes)."""
    return ALIGN and left <= 3


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
    if pos != len(data) and not _end_padding(len(data) - pos):
        raise ValueError("%s: %d bytes left over after the last field" % (struct_name, len(data) - pos))
    return values


def encode_record(record_id, values, timestamp=0):
    """One framed record (record header and payload) as bytes, ready to append to a file; with a
    `[framing] checksum`, its CRC filled in."""
    body = RECORDS[record_id][1]
    payload = encode_struct(body, values)
    header = {FRAMING["tag"]: record_id}
    if FRAMING["length"] is not None:
        header[FRAMING["length"]] = len(payload)
    if FRAMING["timestamp"] is not None:
        header[FRAMING["timestamp"]] = timestamp
    check = FRAMING.get("checksum")
    if check is not None:
        header[check[0]] = 0
        header[check[0]] = record_crc(encode_struct(FRAMING["header"], header), payload)
    return encode_struct(FRAMING["header"], header) + payload


_CRC_TABLE = []


def _reflect(v, width):
    return int(bin(v)[2:].zfill(width)[::-1], 2)


def record_crc(header, payload):
    """The CRC of a record, given its header's bytes and its payload, as the schema's
    `[framing] checksum` says: `FRAMING["checksum"]` is (field, offset, size, width, poly, init,
    reflected, xorout, over the header too). A table-driven CRC in the Rocksoft model."""
    _f, at, size, w, poly, init, refl, xorout, over = FRAMING["checksum"]
    t = _CRC_TABLE
    if not t:
        for i in range(256):
            if refl:
                r, rp = i, _reflect(poly, w)
                for _ in range(8):
                    r = (r >> 1) ^ rp if r & 1 else r >> 1
            else:
                r, top, mask = i << (w - 8), 1 << (w - 1), (1 << w) - 1
                for _ in range(8):
                    r = ((r << 1) ^ poly if r & top else r << 1) & mask
            t.append(r)
    parts = (header[:at], header[at + size:], payload) if over else (payload,)
    if refl:
        reg = _reflect(init, w)
        for part in parts:
            for b in part:
                reg = (reg >> 8) ^ t[(reg ^ b) & 0xFF]
    else:
        reg, mask, sh = init, (1 << w) - 1, w - 8
        for part in parts:
            for b in part:
                reg = ((reg << 8) & mask) ^ t[((reg >> sh) ^ b) & 0xFF]
    return reg ^ xorout


class _Resync(Exception):
    """A record that does not check out (a bad sync or header, a length past the end, a CRC
    mismatch) in a framing with a sync or a checksum: the reader passes over it to the next good
    record. `error` is what to raise when there is none (None: the region runs to the end)."""

    def __init__(self, why, taken, error):
        Exception.__init__(self, why)
        self.why = why
        self.taken = taken
        self.error = error


class Reader(object):
    """Streams the records of a file (a path, or a binary file object) in file order, in constant
    memory. `header` holds the file header's fields; iterate for `Record`s. Raises `DecodeError`
    after yielding every complete record before a fault.

    `strict` (the default) rejects a known record whose length differs from its layout's size;
    with `strict=False` such a record is yielded with `fields` None and its raw `payload`. `name`
    is what errors call the input (default: the path, or the file object's `name`)."""

    def __init__(self, source, strict=True, name=None):
        if isinstance(source, (str, bytes, _os.PathLike)):
            self.path = _os.fsdecode(source)
            self._file = open(source, "rb")
            self._own = True
        else:
            self.path = getattr(source, "name", "<stream>")
            self._file = source
            self._own = False
        if name is not None:
            self.path = name
        self.strict = strict
        self._hdec = None
        self._decoders = {}
        # The schema id the file header names, and the record layouts written under it (`RECORDS`,
        # or an older entry of `LAYOUTS` from the lock file).
        self.schema_id = SCHEMA_ID
        self.records = RECORDS
        self._record = _record_class(RECORDS)
        self.offset = 0
        self.index = 0
        self.header = None
        # Bytes read ahead while passing over a corrupted region, read before the file's.
        self._pending = b""
        # Corrupted regions passed over: (offset, bytes, why), in file order.
        self.skipped = []
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
        if SCHEMA_ID_FIELD is not None:
            sid = self.header[SCHEMA_ID_FIELD]
            records = LAYOUTS.get(sid) if type(sid) is int else None
            if records is None:
                raise DecodeError(
                    self.path, 0, "%s %r is not one this reader knows (%s); regenerate the module from the matching schema"
                    % (SCHEMA_ID_FIELD, sid, ", ".join(map(str, LAYOUTS))), field=SCHEMA_ID_FIELD)
            self.schema_id = sid
            self.records = records
            self._record = _record_class(records)
        self.offset = size

    def __iter__(self):
        while True:
            r = self._step()
            if r is None:
                return
            yield r

    def _read(self, n):
        p = self._pending
        if not p:
            return _read_exact(self._file, n)
        if len(p) >= n:
            self._pending = p[n:]
            return p[:n]
        self._pending = b""
        return p + _read_exact(self._file, n - len(p))

    def _step(self):
        """The record at `self.offset`, or None at the end of the input. With a `[framing]` sync
        or checksum, a record that does not check out is passed over to the next good record and
        noted in `skipped`, as `logspec` does."""
        while True:
            try:
                return self._step_one()
            except _Resync as r:
                if not self._resync(r):
                    return None

    def _resync(self, r):
        """Passes over the bytes from the bad record at `self.offset` to the next record that
        checks out; False when the input ends first."""
        start = self.offset
        buf = bytearray(r.taken[1:])
        sync = FRAMING.get("sync") or b""
        eof = found = False
        k = 0
        while not found:
            j = buf.find(sync, k) if sync else k
            if j < 0 or j >= len(buf):
                # No whole sync (or no byte) left to try: read on from the last bytes that may
                # begin one.
                k = max(len(buf) - len(sync) + 1, k)
                good = None
            else:
                k = j
                good = self._checks_out(buf, k, eof)
            if good:
                found = True
            elif good is False:
                k += 1
            elif eof:
                if r.error is not None:
                    raise r.error
                k = len(buf)
                break
            else:
                more = self._read(1 << 16)
                eof = not more
                buf += more
        self._pending = bytes(buf[k:]) + self._pending
        n = 1 + k
        why = "%s: at byte %d (record #%d): %s; %d bytes passed over to %s" % (
            self.path, start, self.index, r.why, n, "the next good record at byte %d" % (start + n) if found else "the end")
        self.skipped.append((start, n, why))
        self.offset, self.index = start + n, self.index + 1
        return found

    def _checks_out(self, b, k, eof):
        """Whether the record at `b[k:]` checks out: its header decodes, its length is there, its
        CRC matches (or, without one, its type is known and its payload decodes). None: `b` ends
        inside it before the input does."""
        hsize = STRUCTS[FRAMING["header"]][0]
        if len(b) - k < hsize:
            return False if eof else None
        try:
            h, _ = self._hdec(b, k, k + hsize)
        except _Bad:
            return False
        rec = self.records.get(h[FRAMING["tag"]])
        len_f = FRAMING["length"]
        n = h[len_f] if len_f is not None else (rec[2] if rec is not None else None)
        if n is None:
            return False
        if len(b) - k - hsize < n:
            return False if eof else None
        check = FRAMING.get("checksum")
        if check is not None:
            return h[check[0]] == record_crc(bytes(b[k:k + hsize]), bytes(b[k + hsize:k + hsize + n]))
        if rec is None:
            return False
        try:
            _fields, end = _decoder(rec[1])(bytes(b[k + hsize:k + hsize + n]), 0, n)
        except _Bad:
            return False
        return end == n

    def _step_one(self):
        hsize = STRUCTS[FRAMING["header"]][0]
        hdec = self._hdec
        if hdec is None:
            hdec = self._hdec = _decoder(FRAMING["header"])
        tag_f, len_f, ts_f = FRAMING["tag"], FRAMING["length"], FRAMING["timestamp"]
        resync = "sync" in FRAMING or "checksum" in FRAMING
        start = self.offset
        trailer = FRAMING.get("trailer")
        if trailer is None:
            raw = self._read(hsize)
            if not raw:
                return None
        else:
            # The file ends with the trailer: exactly its bytes left at a record boundary.
            raw = self._read(max(hsize, len(trailer) + 1))
            if len(raw) <= len(trailer):
                if raw == trailer:
                    return None
                if len(raw) < len(trailer):
                    raise DecodeError(self.path, start, "truncated file trailer: %d of %d bytes" % (len(raw), len(trailer)), self.index)
                raise DecodeError(self.path, start, "the file trailer should be %s, found %s"
                                  % (trailer.hex(" ").upper(), raw.hex(" ").upper()), self.index)
            if len(raw) > hsize:
                self._pending = raw[hsize:] + self._pending
                raw = raw[:hsize]
        if len(raw) < hsize:
            raise DecodeError(self.path, start, "truncated record header: %d of %d bytes" % (len(raw), hsize), self.index)
        try:
            h, _ = hdec(raw, 0, hsize)
        except _Bad as e:
            if resync:
                raise _Resync("bad record header: %s" % e.message, raw, None)
            raise DecodeError(self.path, start + e.pos, "record header: %s" % e.message, self.index, field=e.field)
        tag = h[tag_f]
        rec = self.records.get(tag)
        name = rec[0] if rec else None
        if len_f is not None:
            n = h[len_f]
        elif rec is not None and rec[2] is not None:
            n = rec[2]
        else:
            raise DecodeError(self.path, start, "record type %r is %s and the framing has no length field to skip it by"
                              % (tag, "unknown" if rec is None else "of variable size"), self.index, name)
        payload = self._read(n)
        if len(payload) < n:
            e = DecodeError(self.path, start, "truncated payload: %d of %d bytes" % (len(payload), n), self.index, name)
            if resync:
                raise _Resync("the length field says %d payload bytes, only %d follow" % (n, len(payload)), raw + payload, e)
            raise e
        check = FRAMING.get("checksum")
        if check is not None:
            crc = record_crc(raw, payload)
            if h[check[0]] != crc:
                raise _Resync("checksum mismatch: `%s.%s` holds %#x, the record's bytes give %#x"
                              % (FRAMING["header"], check[0], h[check[0]], crc), raw + payload, None)
        # The offset moves past the record only once it is accepted: after a fault it is where
        # the failing record starts (the reference reader's `bytes_consumed`).
        after = start + hsize + n
        ts = h[ts_f] if ts_f is not None else None
        index = self.index
        if rec is None:
            self.offset, self.index = after, index + 1
            return self._record(start, index, ts, tag, None, None, payload)
        if rec[2] is not None and n != rec[2]:
            if self.strict:
                raise DecodeError(self.path, start, "payload length %d, expected %d" % (n, rec[2]), index, name)
            self.offset, self.index = after, index + 1
            return self._record(start, index, ts, tag, name, None, payload)
        dec = self._decoders.get(tag)
        if dec is None:
            dec = self._decoders[tag] = _decoder(rec[1])
        try:
            fields, end = dec(payload, 0, n)
        except _Bad as e:
            raise DecodeError(self.path, start + hsize + e.pos, e.message, index, name, e.field)
        if end != n and not _end_padding(n - end):
            raise DecodeError(self.path, start + hsize + end, "%d payload bytes left after the last field" % (n - end), index, name)
        self.offset, self.index = after, index + 1
        return self._record(start, index, ts, tag, name, fields, None)


def _flat_field(ty, const):
    """Whether a payload field can be decoded column-wise: a number, bool, pad or fixed byte
    string (in any byte order) without a constant to check."""
    if const is not None:
        return False
    return ty[0] in ("p", "enum", "flags", "bool", "pad") or (ty[0] == "bytes" and ty[1][0] == "fixed")


class _Flat(object):
    """How `read` walks the record stream: the record types whose payload is flat (fixed size,
    numbers, bools, pads and fixed byte strings, no constants) are found by one `unpack_from` of their record header's tag, length and constant fields and a
    dict look-up, and decoded afterwards all at once per type; every other record takes the
    `Reader`'s path. Needs a fixed-size record header in one byte order with a length field."""

    def __init__(self, records):
        hname = FRAMING["header"]
        hsize, hfields = STRUCTS[hname]
        self.ok = False
        self.types = {}
        self.steps = {}
        if hsize is None or FRAMING["length"] is None or _fast(hfields) is None:
            return
        # Records with a sync or a CRC are each checked, by the `Reader`.
        if "sync" in FRAMING or "checksum" in FRAMING:
            return
        at = {}
        pos = 0
        for name, ty, _c in hfields:
            if ty[0] != "pad":
                at[name] = (pos, ty)
            pos += _size(ty)
        # The key: the tag, the length and every constant field (a sync word), in wire order,
        # everything else skipped; a record whose key is not in `steps` takes the slow path.
        keyed = [FRAMING["tag"], FRAMING["length"]] + [n for n, _t, c in hfields if c is not None]
        ts_f = FRAMING["timestamp"]
        if any(at[w][1][0] not in ("p", "enum", "flags") for w in keyed + ([ts_f] if ts_f else [])):
            return
        order = at[FRAMING["tag"]][1][1][0]
        key_code = order
        for name, ty, _c in hfields:
            key_code += ty[1][1:] if name in keyed else "%dx" % _size(ty)
        self.key = _st(key_code)
        self.hsize = hsize
        self.ts_at = at[ts_f] if ts_f is not None else None
        # tag -> (payload size, fields (name, offset in the record, type))
        for tag, (_name, body, size, _fp) in records.items():
            bfields = STRUCTS[body][1]
            if size is None or not all(_flat_field(ty, c) for _n, ty, c in bfields):
                continue
            values = {n: 0 for n, _t, c in hfields if c is None}
            values[FRAMING["tag"]] = tag
            values[FRAMING["length"]] = size
            try:
                k = self.key.unpack(encode_struct(hname, values))
            except (_struct.error, OverflowError):
                continue
            fields = []
            pos = hsize
            for name, ty, _c in bfields:
                if ty[0] != "pad":
                    fields.append((name, pos, ty))
                pos += _size(ty)
            self.types[tag] = (size, fields)
            self.steps[k] = (tag, hsize + size)
        self.longest = max([step for _t, step in self.steps.values()] or [0])
        self.ok = bool(self.steps)

    def columns(self, tag, data, offsets, np):
        """The columns of one flat record type from the record offsets in `data`."""
        size, fields = self.types[tag]
        spec = []
        if self.ts_at is not None:
            spec.append((FRAMING["timestamp"], self.ts_at[0], self.ts_at[1]))
        spec.extend(fields)
        if np is None:
            return _columns_stdlib(data, offsets, self.hsize + size, spec)
        dt = np.dtype({
            "names": [n for n, _o, _t in spec],
            "formats": [_np_code(np, t) for _n, _o, t in spec],
            "offsets": [o for _n, o, _t in spec],
            "itemsize": self.hsize + size,
        })
        # Every byte offset of the input seen as the start of a record of this type; the
        # offsets pick the real ones, copied into one contiguous structured array.
        view = np.ndarray((len(data) - dt.itemsize + 1,), dtype=dt, buffer=data, strides=(1,))
        rows = view[np.frombuffer(offsets, dtype=np.int64)]
        out = {}
        for n, _o, t in spec:
            col = rows[n]
            out[n] = col != 0 if t[0] == "bool" else col.astype(col.dtype.newbyteorder("="))
        return out


def _columns_stdlib(data, offsets, size, spec):
    """Columns of equal-size rows at `offsets` in `data`, standard library only: the rows are
    joined into one buffer, each field's bytes gathered from it with strided slices (every
    `size`-th byte) into an `array.array` of the field's type, and that turned into a list."""
    n = len(offsets)
    rows = b"".join(map(data.__getitem__, map(slice, offsets, map(_add, offsets, _repeat(size, n)))))
    out = {}
    for name, at, ty in spec:
        k = ty[0]
        if k == "bytes":
            w = ty[1][1]
            out[name] = [rows[i:i + w] for i in range(at, len(rows), size)]
            continue
        code = "<B" if k == "bool" else ty[1]
        w = _st(code).size
        raw = bytearray(w * n)
        for j in range(w):
            raw[j::w] = rows[at + j::size]
        a = _array.array(_typecode(code[1], w))
        a.frombytes(raw)
        if w > 1 and (code[0] == ">") != (_sys.byteorder == "big"):
            a.byteswap()
        out[name] = [v != 0 for v in a] if k == "bool" else a.tolist()
    return out


def _typecode(code, width):
    """The `array` type code of a `struct` number code: the same kind, the same width."""
    if code in "fd":
        return code
    kinds = "BHILQ" if code.isupper() else "bhilq"
    return next(c for c in kinds if _array.array(c).itemsize == width)


def _np_code(np, ty):
    """The numpy type of a flat field at its wire byte order: struct codes name the same
    standard-size numbers in numpy; a bool is read as a byte and compared with zero."""
    k = ty[0]
    if k == "bool":
        return "u1"
    if k == "bytes":
        # Raw bytes, trailing zeros kept (numpy's "S" would drop them).
        return "V%d" % ty[1][1]
    return np.dtype(ty[1])


_FLAT = {}


def _flat(schema_id):
    """The walk plan of the record layouts of one schema id (see `LAYOUTS`)."""
    plan = _FLAT.get(schema_id)
    if plan is None:
        plan = _FLAT[schema_id] = _Flat(LAYOUTS.get(schema_id, RECORDS))
    return plan


def _slurp(source):
    """The name and the whole content of a path or binary file object."""
    if isinstance(source, (str, bytes, _os.PathLike)):
        with open(source, "rb") as f:
            return _os.fsdecode(source), f.read()
    return getattr(source, "name", "<stream>"), source.read()


def read(source, numpy=False, strict=True):
    """Reads a whole file into per-record-type columns (the shape of upstream's
    `read_timeseries_bin`): `columns[record name][field]`, the timestamp a column too, in file
    order; `counts` per record name and `unknown` (timestamp, type, len) of skipped records. Lists
    of Python values, or with `numpy=True` numpy arrays of each field's wire type (needs numpy).
    On a fault, raises `DecodeError` whose `partial` holds everything read before it.

    The file is read into memory once. Flat records are found by one walk over the record
    headers and then decoded per record type at once: with numpy, one structured-dtype copy per
    type; without, `struct.unpack_from` mapped over the type's offsets."""
    np = None
    if numpy:
        try:
            import numpy as np
        except ImportError:
            raise ImportError("read(..., numpy=True) needs numpy; install it or use numpy=False for lists")
    if not any(_flat(sid).ok for sid in LAYOUTS):
        return _read_records(Reader(source, strict), np)
    name, data = _slurp(source)
    if not isinstance(data, bytes):
        data = bytes(data)
    reader = Reader(_io.BytesIO(data), strict, name)
    plan = _flat(reader.schema_id)
    if not plan.ok:
        return _read_records(reader, np)
    records = reader.records
    offsets = {tag: _array.array("q") for tag in plan.types}
    appends = {k: (offsets[tag].append, step) for k, (tag, step) in plan.steps.items()}
    other = _Columns(np, records)
    end = len(data)
    trailer = FRAMING.get("trailer") or b""
    # The input's last bytes (a trailer among them) are read by `Reader`, one record at a time.
    stop = end - max(plan.longest, len(trailer) + 1) + 1
    key = plan.key.unpack_from
    pos = reader.offset

    def result():
        cols = {}
        counts = {}
        for tag, (rname, _body, _size, _fp) in records.items():
            offs = offsets.get(tag)
            if offs:
                cols[rname] = plan.columns(tag, data, offs, np)
                counts[rname] = len(offs)
            elif rname in other.columns:
                cols[rname] = other.finish(rname)
                counts[rname] = other.counts[rname]
        total = sum(counts.values()) + len(other.unknown)
        return Log(reader.header, cols, counts, other.unknown, total, pos)

    try:
        while True:
            try:
                # The hot loop: a flat record of a known length well inside the input.
                while pos < stop:
                    append, step = appends[key(data, pos)]
                    append(pos)
                    pos += step
            except KeyError:
                pass
            if pos >= end and not trailer:
                break
            # Anything else (another record type or length, the input's last bytes) one at a
            # time, the way `Reader` does it.
            reader._file.seek(pos)
            reader.offset = pos
            reader.index = sum(len(o) for o in offsets.values()) + other.total
            r = reader._step()
            if r is None:
                break
            if r.type in offsets and r.fields is not None:
                offsets[r.type].append(pos)
            else:
                other.add(r)
            pos = reader.offset
    except DecodeError as e:
        e.partial = result()
        raise
    return result()


class _Columns(object):
    """Per-record-type columns built one record at a time (records that are not flat)."""

    def __init__(self, np, records):
        self.np = np
        self.records = records
        self.columns = {}
        self.counts = {}
        self.unknown = []
        self.total = 0

    def add(self, r):
        self.total += 1
        if r.fields is None:
            self.unknown.append((r.timestamp, r.type, len(r.payload)))
            return
        self.counts[r.name] = self.counts.get(r.name, 0) + 1
        cols = self.columns.get(r.name)
        if cols is None:
            cols = self.columns[r.name] = {}
            if FRAMING["timestamp"] is not None:
                cols[FRAMING["timestamp"]] = []
            for k in r.fields:
                cols[k] = []
        if FRAMING["timestamp"] is not None:
            cols[FRAMING["timestamp"]].append(r.timestamp)
        for k, v in r.fields.items():
            cols[k].append(v)

    def finish(self, name):
        cols = self.columns[name]
        np = self.np
        if np is None:
            return cols
        body = next(b for n, b, _s, _f in self.records.values() if n == name)
        types = {n: t for n, t, _c in STRUCTS[FRAMING["header"]][1]}
        types.update((n, t) for n, t, _c in STRUCTS[body][1])

        def dtype(ty):
            # The wire type's own width: float32 stays float32, u16 stays uint16.
            if ty[0] in ("p", "enum", "flags"):
                return np.dtype("=" + ty[1][1:])
            if ty[0] == "bytes" and ty[1][0] == "fixed":
                return np.dtype("V%d" % ty[1][1])
            return np.bool_ if ty[0] == "bool" else None

        return {k: np.asarray(v, dtype=dtype(types[k])) for k, v in cols.items()}


def _read_records(reader, np):
    """`read` through the `Reader`, one record at a time (framings the walk cannot take)."""
    other = _Columns(np, reader.records)

    def result():
        cols = {}
        counts = {}
        for _tag, (rname, _body, _size, _fp) in reader.records.items():
            if rname in other.columns:
                cols[rname] = other.finish(rname)
                counts[rname] = other.counts[rname]
        return Log(reader.header, cols, counts, other.unknown, other.total, reader.offset)

    with reader:
        try:
            for r in reader:
                other.add(r)
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


def _float_text(v):
    """A float as `logspec dump` prints it (Rust's `{:?}`): the shortest digits that read back
    to the same float, as a decimal from 1e-4 up to 1e16 (`0.0001`, `2.0`) and otherwise with a
    plain integer exponent (`1e-5`, `1e16`; Python's repr writes `1e-05`, `1e+16`). When two
    shortest spellings are equally close to the exact value, Rust takes the one of greater
    magnitude (`-0.18387222290039063`) and Python's repr the even one (`...062`); this takes
    Rust's. Non-finite values are the strings `"NaN"`, `"Infinity"`, `"-Infinity"`."""
    if v != v:
        return '"NaN"'
    if v in (_math.inf, -_math.inf):
        return '"Infinity"' if v > 0 else '"-Infinity"'
    s = repr(v)
    if v == 0:
        return s
    _sign, shortest, sexp = _decimal.Decimal(s).as_tuple()
    _sign, exact, eexp = _decimal.Decimal(v).as_tuple()
    shortest = "".join(map(str, shortest))
    exact = "".join(map(str, exact))
    # The decimal point sits `point` digits after the start of the digit string.
    point = len(shortest) + sexp
    exact = exact.rstrip("0")
    body = shortest.rstrip("0")
    if len(exact) == len(body) + 1 and exact[-1] == "5" and exact[:-1] == body:
        up = str(int(body) + 1)
        text = _rust_float(v < 0, up.rstrip("0"), point + len(up) - len(body))
        if float(text) == v:
            return text
    return _rust_float(v < 0, body, point)


def _rust_float(negative, digits, point):
    """Rust's `{:?}` layout of `0.digits x 10^point`."""
    sign = "-" if negative else ""
    if -3 <= point <= 16:
        if point <= 0:
            return sign + "0." + "0" * -point + digits
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits)) + ".0"
        return sign + digits[:point] + "." + digits[point:]
    frac = "." + digits[1:] if len(digits) > 1 else ""
    return "%s%s%se%d" % (sign, digits[0], frac, point - 1)


# `logspec dump`'s string escapes: quote, backslash, \n, \r, \t, other control characters as \u00XX.
_ESCAPES = {c: "\\u%04x" % c for c in range(0x20)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


def json_text(v):
    """A value (as `record_json` returns it) as compact JSON text, spelled exactly as `logspec
    dump` spells it (floats by `_float_text`, strings with its escapes)."""
    t = type(v)
    if t is float:
        return _float_text(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is str:
        return '"' + v.translate(_ESCAPES) + '"'
    if v is None:
        return "null"
    if t is dict:
        return "{" + ",".join(json_text(k) + ":" + json_text(x) for k, x in v.items()) + "}"
    if t in (list, tuple):
        return "[" + ",".join(map(json_text, v)) + "]"
    return json_text(_json_value(v)) if t is bytes else _json.dumps(v)


def record_json(r, names=False):
    """A record as the JSON object `logspec dump` prints for it; with `names`, its enum and flags
    fields by name as `named_fields` gives them (`logspec dump` prints the numbers)."""
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
        obj["fields"] = _json_value(_named_record(r, False) if names else r.fields)
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
    d.add_argument("--names", action="store_true",
                   help="enum values by name and flags as lists of bit names (logspec dump prints the numbers)")
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
                    out.write(json_text(record_json(rec, args.names)))
                    out.write("\n")
                if r.skipped:
                    out.flush()
                    for _at, _n, why in r.skipped:
                        sys.stderr.write("%s: %s\n" % (FORMAT, why))
                    return 1
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
