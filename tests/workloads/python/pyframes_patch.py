"""pyframes_patch.py - copies of a CPython interpreter that the Python-frame reader must refuse
(tests/integration/test_pyframes.c, test_pyframes313.c): `version SRC DST [3.X]` writes 3.99
(or 3.X) into Py_Version (the interpreter runs as before: its version macros are compiled in),
`strip SRC DST` renames _PyRuntime in .dynsym's strings (to _PyRuntimX) and drops .symtab's
name for it, as a file stripped of the symbols that locate the runtime state would be, `cookie
SRC DST` (3.13+) spoils the "xdebugpy" cookie of the _Py_DebugOffsets that _PyRuntime's initial
bytes start with (the interpreter does not read it)."""
import shutil
import struct
import sys


def sections(b):
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    out = []
    for i in range(shnum):
        name, typ, flags, addr, off, size, link, info, align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", b, shoff + i * shentsize)
        out.append(dict(name=name, type=typ, addr=addr, off=off, size=size, link=link,
                        entsize=entsize))
    return out


def symbols(b, secs):
    for s in secs:
        if s["type"] not in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            continue
        strs = secs[s["link"]]
        for i in range(s["size"] // s["entsize"]):
            at = s["off"] + i * s["entsize"]
            name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", b, at)
            end = b.index(b"\0", strs["off"] + name)
            yield b[strs["off"] + name:end], shndx, value, strs["off"] + name


def main(mode, src, dst, version="3.99"):
    shutil.copyfile(src, dst)
    shutil.copymode(src, dst)
    b = bytearray(open(dst, "rb").read())
    secs = sections(b)
    done = False
    for name, shndx, value, name_at in list(symbols(b, secs)):
        if mode == "version" and name == b"Py_Version":
            sec = secs[shndx]
            at = sec["off"] + value - sec["addr"]
            major, minor = (int(x) for x in version.split("."))
            struct.pack_into("<I", b, at, major << 24 | minor << 16 | 0xF0)  # X.Y.0 final
            done = True
        elif mode == "cookie" and name == b"_PyRuntime" and shndx < len(secs):
            sec = secs[shndx]
            at = sec["off"] + value - sec["addr"]
            if b[at:at + 8] != b"xdebugpy":
                sys.exit("no _Py_DebugOffsets cookie at _PyRuntime in %s" % src)
            b[at:at + 8] = b"xdebugpX"
            done = True
        elif mode == "strip" and name == b"_PyRuntime":
            b[name_at:name_at + 10] = b"_PyRuntimX"
            done = True
    if not done:
        sys.exit("nothing to patch in %s" % src)
    open(dst, "wb").write(b)


if __name__ == "__main__":
    main(*sys.argv[1:5])
