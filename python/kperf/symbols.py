"""Symbols and call stacks as Python objects (libkperf's Symbol and Stack, also ksym's).

A stack read from a PmuData or PmuTraceData is copied out of C once per array (frames shared
by records stay shared), so it stays valid after the array is freed. While the array is
alive, a frame also gives the C struct it came from (c_stack, and `contents`), and can be
passed to ctypes.cast like the ctypes.POINTER(CtypesStack) libkperf's documentation names
for ImplPmuTraceData.stack; after the array is freed those raise DataFreedError.
"""

import ctypes
import weakref

from . import _cstructs as cs
from . import _lib
from ._convert import text, to_bytes
from .perror import DataFreedError

_SYMBOL_FIELDS = (
    "addr",
    "module",
    "symbolName",
    "mangleName",
    "fileName",
    "lineNum",
    "offset",
    "codeMapEndAddr",
    "codeMapAddr",
    "firstLine",
    "mntPoint",
)
_SYMBOL_TEXT = ("module", "symbolName", "mangleName", "fileName", "mntPoint")


class Symbol:
    """A resolved address (struct Symbol): module, symbolName, fileName, lineNum, ...

    kperf-bpf adds `inlined`: True for the frame of an inlined call (stacks read with
    PmuAttr(inlineFrames=True)), whose code is part of the next frame towards the caller that
    is not inlined."""

    __slots__ = _SYMBOL_FIELDS + ("inlined",)

    def __init__(
        self,
        addr=0,
        module="",
        symbolName="",
        mangleName="",
        fileName="",
        lineNum=0,
        offset=0,
        codeMapEndAddr=0,
        codeMapAddr=0,
        firstLine=0,
        mntPoint="",
    ):
        self.addr = addr
        self.module = module
        self.symbolName = symbolName
        self.mangleName = mangleName
        self.fileName = fileName
        self.lineNum = lineNum
        self.offset = offset
        self.codeMapEndAddr = codeMapEndAddr
        self.codeMapAddr = codeMapAddr
        self.firstLine = firstLine
        self.mntPoint = mntPoint
        self.inlined = False

    def _values(self):
        return tuple(getattr(self, f) for f in _SYMBOL_FIELDS)

    def __eq__(self, other):
        if not isinstance(other, Symbol):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self):
        return hash(self._values())

    def __repr__(self):
        return (
            f"Symbol(addr={self.addr:#x}, module={self.module!r}, "
            f"symbolName={self.symbolName!r}, fileName={self.fileName!r}, "
            f"lineNum={self.lineNum})"
        )

    @property
    def c_sym(self):
        """A C struct Symbol (ctypes) holding this symbol's values (a new copy each call)."""
        c = cs.Symbol()
        for f in _SYMBOL_FIELDS:
            v = getattr(self, f)
            if f in _SYMBOL_TEXT:
                v = to_bytes(v, f) if v else None
            setattr(c, f, v)
        return c

    @classmethod
    def from_c_sym(cls, c_sym):
        """A copy of a C struct Symbol (a ctypes struct, or a pointer to one)."""
        if isinstance(c_sym, ctypes._Pointer):
            c_sym = c_sym.contents
        s = cls.__new__(cls)
        for f in _SYMBOL_FIELDS:
            v = getattr(c_sym, f)
            setattr(s, f, text(v) if f in _SYMBOL_TEXT else v)
        s.inlined = _is_inline(ctypes.addressof(c_sym))
        return s


def _is_inline(addr):
    """Is the C Symbol at <addr> an inline frame (KperfSymbolGetInfo)? False for a library
    without inline frames."""
    if not _lib.has("KperfSymbolGetInfo"):
        return False
    info = cs.KperfSymbolInfo(ctypes.sizeof(cs.KperfSymbolInfo))
    return _lib.fn("KperfSymbolGetInfo")(addr, ctypes.byref(info)) == 0 and bool(info.inlined)


class Stack:
    """A frame of a call stack, leaf first: `next` goes towards the caller, `prev` towards
    the callee (struct Stack). Iterating a frame gives it and its callers."""

    __slots__ = ("symbol", "next", "prev", "_addr", "_owner", "_c", "__weakref__")

    def __init__(self, symbol=None, next=None, prev=None):
        self.symbol = symbol
        self.next = next
        self.prev = prev
        self._addr = 0
        self._owner = None
        self._c = None

    def __iter__(self):
        s = self
        while s is not None:
            yield s
            s = s.next

    def __repr__(self):
        name = self.symbol.symbolName if self.symbol else "?"
        return f"<Stack {name}>"

    @property
    def c_stack(self):
        """The C struct Stack (ctypes) of this frame: the library's own while the array it
        was read from is alive, else one built from this frame's values."""
        if self._addr:
            owner = self._owner() if self._owner is not None else None
            if owner is None or owner._freed:
                raise DataFreedError("stack's PmuData")
            return cs.Stack.from_address(self._addr)
        if self._c is None:
            self._c = c = cs.Stack()
            # set before linking: the neighbours' c_stack link back to this one
            c._keep = []
            if self.symbol is not None:
                sym = self.symbol.c_sym
                c._keep.append(sym)
                c.symbol = ctypes.pointer(sym)
            for name in ("next", "prev"):
                other = getattr(self, name)
                if other is not None:
                    oc = other.c_stack
                    c._keep.append(oc)
                    setattr(c, name, ctypes.pointer(oc))
        return self._c

    # what libkperf documents for ImplPmuTraceData.stack is a ctypes pointer: code written
    # for it reads .contents and passes it to ctypes.cast
    contents = c_stack

    @property
    def _as_parameter_(self):
        return ctypes.addressof(self.c_stack)

    @classmethod
    def from_c_stack(cls, c_stack):
        """A copy of the chain around a C struct Stack (a ctypes struct or a pointer)."""
        if isinstance(c_stack, ctypes._Pointer):
            if not c_stack:
                return None
            c_stack = c_stack.contents
        return copy_stack(ctypes.addressof(c_stack), {}, {})


_MAX_FRAMES = 1 << 16  # a cycle in a corrupt chain must not hang the reader
_STACK_FIELDS = (cs.Stack.symbol.offset, cs.Stack.next.offset, cs.Stack.prev.offset)
_read_ptr = ctypes.c_void_p.from_address


def _ptr_at(addr):
    return _read_ptr(addr).value or 0


def copy_stack(head, symcache, stackcache, owner=None):
    """Python frames for the C chain around the struct Stack at address <head>.

    symcache maps C Symbol addresses to copies; stackcache maps C Stack addresses to frames,
    so chains shared by records of one array are copied once. <owner> is the array (weakly
    referenced by the frames, for c_stack)."""
    if not head:
        return None
    first = stackcache.get(head)
    if first is not None:
        return first
    ref = weakref.ref(owner) if owner is not None else None
    sym_off, next_off, prev_off = _STACK_FIELDS

    def frame(addr):
        f = Stack.__new__(Stack)
        sp = _ptr_at(addr + sym_off)
        sym = None
        if sp:
            sym = symcache.get(sp)
            if sym is None:
                sym = symcache[sp] = Symbol.from_c_sym(cs.Symbol.from_address(sp))
        f.symbol, f.next, f.prev = sym, None, None
        f._addr, f._owner, f._c = (addr, ref, None) if ref is not None else (0, None, None)
        return f

    seen = {head}
    first = frame(head)
    cur, p = first, _ptr_at(head + next_off)
    while p and p not in seen and len(seen) < _MAX_FRAMES:
        seen.add(p)
        nxt = frame(p)
        cur.next, nxt.prev = nxt, cur
        cur, p = nxt, _ptr_at(p + next_off)
    cur, p = first, _ptr_at(head + prev_off)
    while p and p not in seen and len(seen) < _MAX_FRAMES:
        seen.add(p)
        prv = frame(p)
        cur.prev, prv.next = prv, cur
        cur, p = prv, _ptr_at(p + prev_off)
    stackcache[head] = first
    return first


class AsmCode:
    """One disassembled instruction (struct AsmCode): addr (file address), code, fileName,
    lineNum (source line, under DWARF)."""

    __slots__ = ("addr", "code", "fileName", "lineNum")

    def __init__(self, addr=0, code="", fileName="", lineNum=0):
        self.addr, self.code, self.fileName, self.lineNum = addr, code, fileName, lineNum

    def __repr__(self):
        return f"<AsmCode {self.addr:#x} {self.code}>"

    @property
    def c_asm_code(self):
        return cs.AsmCode(
            self.addr, to_bytes(self.code, "code"), to_bytes(self.fileName, "fileName"),
            self.lineNum,
        )

    @classmethod
    def from_c_asm_code(cls, c):
        if isinstance(c, ctypes._Pointer):
            c = c.contents
        return cls(c.addr, text(c.code), text(c.fileName), c.lineNum)


class StackAsm:
    """A node of a disassembly list (struct StackAsm): a function label (funcName,
    funcStartAddr, functFileOffset; asmCode None) or an instruction (asmCode), then `next`.
    libkperf's Python calls funcName fileName: both names are here."""

    __slots__ = ("funcName", "funcStartAddr", "functFileOffset", "next", "asmCode")

    def __init__(self, fileName="", funcStartAddr=0, functFileOffset=0, next=None, asmCode=None):
        self.funcName = fileName
        self.funcStartAddr = funcStartAddr
        self.functFileOffset = functFileOffset
        self.next = next
        self.asmCode = asmCode

    fileName = property(
        lambda self: self.funcName, lambda self, v: setattr(self, "funcName", v)
    )

    def __iter__(self):
        s = self
        while s is not None:
            yield s
            s = s.next

    def __repr__(self):
        return f"<StackAsm {self.funcName or self.asmCode}>"

    @property
    def c_stack_asm(self):
        """The list from this node as C structs (a copy; the first node)."""
        nodes = list(self)
        cs_nodes = [cs.StackAsm() for _ in nodes]
        keep = []
        for n, c in zip(nodes, cs_nodes):
            c.funcName = to_bytes(n.funcName, "funcName") if n.funcName else None
            c.funcStartAddr, c.functFileOffset = n.funcStartAddr, n.functFileOffset
            if n.asmCode is not None:
                code = n.asmCode.c_asm_code
                keep.append(code)
                c.asmCode = ctypes.pointer(code)
        for c, nxt in zip(cs_nodes, cs_nodes[1:]):
            c.next = ctypes.pointer(nxt)
        cs_nodes[0]._keep = (cs_nodes, keep)
        return cs_nodes[0]

    @classmethod
    def from_c_stack_asm(cls, c):
        """A copy of the C list from node <c> (a ctypes struct or pointer)."""
        if isinstance(c, ctypes._Pointer):
            if not c:
                return None
            c = c.contents
        first = prev = None
        seen = 0
        while c is not None and seen < _MAX_ASM:
            node = cls(
                text(c.funcName) if c.funcName else "",
                c.funcStartAddr,
                c.functFileOffset,
                None,
                AsmCode.from_c_asm_code(c.asmCode.contents) if c.asmCode else None,
            )
            if prev is None:
                first = node
            else:
                prev.next = node
            prev, seen = node, seen + 1
            c = c.next.contents if c.next else None
        return first


_MAX_ASM = 1 << 22  # nodes of one disassembly list: a corrupt cycle must not hang


__all__ = ["Symbol", "Stack"]
