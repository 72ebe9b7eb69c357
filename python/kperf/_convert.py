"""Checking Python arguments before they reach C: ints in the C type's range, strings without
NUL, lists that are lists; and reading C strings back. Errors name the argument, so a wrong
call says which value is wrong instead of corrupting a struct or raising deep in ctypes."""

import ctypes

INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def check_int(v, lo, hi, what):
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            v = v.__index__()
        except (AttributeError, TypeError):
            raise TypeError(f"{what} must be an int, not {type(v).__name__}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{what} = {v} is out of range [{lo}, {hi}]")
    return int(v)


def unsigned(bits):
    return lambda v, what: check_int(v, 0, 2**bits - 1, what)


def flag(v, what):
    return 1 if v else 0


def cint(v, what):
    return check_int(v, INT_MIN, INT_MAX, what)


def to_bytes(s, what):
    if isinstance(s, str):
        b = s.encode("utf-8")
    elif isinstance(s, (bytes, bytearray)):
        b = bytes(s)
    else:
        raise TypeError(f"{what} must be a str, not {type(s).__name__}")
    if b"\0" in b:
        raise ValueError(f"{what} {s!r} contains a NUL character")
    return b


def as_list(values, what):
    if values is None:
        return []
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} must be a list, not a single {type(values).__name__}")
    try:
        return list(values)
    except TypeError:
        raise TypeError(f"{what} must be a list, not {type(values).__name__}") from None


def str_array(values, what):
    items = [to_bytes(v, f"{what} entry") for v in as_list(values, what)]
    if not items:
        return None, 0
    return (ctypes.c_char_p * len(items))(*items), len(items)


def int_array(values, what):
    items = [cint(v, f"{what} entry") for v in as_list(values, what)]
    if not items:
        return None, 0
    return (ctypes.c_int * len(items))(*items), len(items)


def text(b):
    """A C string (bytes or None) as str; "" for NULL."""
    return b.decode("utf-8", "replace") if b else ""


def string_cache():
    """A decoder of C strings by address: records of one array share a few distinct strings
    (event names, commands), decoded once each."""
    cache = {}
    string_at = ctypes.string_at

    def get(addr):
        if not addr:
            return ""
        s = cache.get(addr)
        if s is None:
            s = cache[addr] = string_at(addr).decode("utf-8", "replace")
        return s

    return get


# struct codes of the standard sizes ("="), by (ctypes type's signedness, size)
_INT_CODES = {(True, 1): "b", (False, 1): "B", (True, 2): "h", (False, 2): "H",
              (True, 4): "i", (False, 4): "I", (True, 8): "q", (False, 8): "Q"}


def _struct_code(typ):
    if typ in (ctypes.c_double,):
        return "d"
    if typ in (ctypes.c_char_p, ctypes.c_void_p) or issubclass(typ, ctypes._Pointer):
        return _INT_CODES[(False, ctypes.sizeof(ctypes.c_void_p))]
    if issubclass(typ, ctypes._SimpleCData) and typ._type_ in "bBhHiIlLqQ":
        return _INT_CODES[(typ._type_.islower(), ctypes.sizeof(typ))]
    return None


def unpacker(ctype, names):
    """A struct.Struct that reads fields <names> (scalars and pointers, as ints) of one
    <ctype> record at its offsets, so that a record is read in one call instead of one ctypes
    attribute access per field."""
    import struct

    fields = {f[0]: f[1] for f in ctype._fields_}
    fmt, pos = "=", 0
    for name in names:
        desc = getattr(ctype, name)
        code = _struct_code(fields[name])
        if code is None or desc.size != struct.calcsize("=" + code):
            raise TypeError(f"{ctype.__name__}.{name}: no struct code for {fields[name]}")
        if desc.offset < pos:
            raise ValueError(f"{ctype.__name__}: fields must be given in order ({name})")
        fmt += "x" * (desc.offset - pos) + code
        pos = desc.offset + desc.size
    return struct.Struct(fmt)
