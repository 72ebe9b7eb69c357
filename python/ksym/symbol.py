"""libkperf's ksym module over libkperf-bpf's symbol resolver (symbol.h): record a process's
or the kernel's symbols, resolve addresses and call chains, release what was recorded.

Results are copies (kperf.Symbol / kperf.Stack objects), valid after free_module and
destroy. As libkperf's, record_* / free_module / destroy report nothing through their return
value that libkperf's scripts look at; here the record_* functions return 0 or the error code
(kperf.error() says why), and the lookups return None on failure.

kperf-bpf's additions: record_elf / record_dwarf (a file no process maps), update_module,
map_code_addr, asm_code (disassembly with source lines), asm_text, build_id.
"""

import ctypes


from kperf import _lib, symbols
from kperf._convert import cint, text, to_bytes, unsigned
from kperf.pmu import _call

_ulong = unsigned(8 * ctypes.sizeof(ctypes.c_ulong))


class Symbol(symbols.Symbol):
    """A resolved address, with ksym's constructor (no mangleName argument)."""

    __slots__ = ()

    def __init__(
        self,
        addr=0,
        module="",
        symbolName="",
        fileName="",
        lineNum=0,
        offset=0,
        codeMapEndAddr=0,
        codeMapAddr=0,
        firstLine=0,
        mntPoint="",
    ):
        super().__init__(
            addr, module, symbolName, "", fileName, lineNum, offset, codeMapEndAddr,
            codeMapAddr, firstLine, mntPoint,
        )


class Stack(symbols.Stack):
    """A frame of a call stack (symbol, next towards the caller, prev towards the callee)."""

    __slots__ = ()

    def __init__(self, symbol=None, next=None, prev=None):
        super().__init__(symbol, next, prev)


def _code(r):
    return r if r == 0 else (_lib.state()[0] or -1)


def record_kernel():
    """Load the kernel's symbols (SymResolverRecordKernel): 0, or the error code."""
    return _code(_call("SymResolverRecordKernel"))


def record_module(pid, dwarf=True):
    """Record the modules process <pid> maps, with their DWARF line tables unless dwarf is
    False (SymResolverRecordModule / ...NoDwarf): 0, or the error code."""
    name = "SymResolverRecordModule" if dwarf else "SymResolverRecordModuleNoDwarf"
    return _code(_call(name, cint(pid, "pid")))


def get_stack(pid, stacks):
    """The call chain of the addresses <stacks> (leaf first) of process <pid>, resolved
    (StackToHash): a kperf.Stack (iterate it for the frames), or None."""
    addrs = [_ulong(a, "stacks entry") for a in stacks]
    arr = (ctypes.c_ulong * len(addrs))(*addrs) if addrs else None
    p = _call("StackToHash", cint(pid, "pid"), arr, len(addrs))
    return symbols.copy_stack(ctypes.cast(p, ctypes.c_void_p).value, {}, {}) if p else None


def get_symbol(pid, addr):
    """The symbol of address <addr> in process <pid> (SymResolverMapAddr), or None."""
    p = _call("SymResolverMapAddr", cint(pid, "pid"), _ulong(addr, "addr"))
    return symbols.Symbol.from_c_sym(p.contents) if p else None


def free_module(pid):
    """Forget what was recorded for process <pid> (FreeModuleData)."""
    _call("FreeModuleData", cint(pid, "pid"))


def destroy():
    """Forget everything the resolver recorded (SymResolverDestroy)."""
    _call("SymResolverDestroy")


# ---- kperf-bpf's additions


def record_elf(path, dwarf=False):
    """Load the symbols (and, with dwarf, the lines) of an ELF file no recorded process maps
    (SymResolverRecordElf / ...Dwarf): 0, or the error code."""
    name = "SymResolverRecordDwarf" if dwarf else "SymResolverRecordElf"
    return _code(_call(name, to_bytes(path, "path")))


def update_module(pid, module, startAddr, dwarf=True):
    """Add a module that process <pid> mapped at <startAddr> after it was recorded
    (SymResolverUpdateModule / ...NoDwarf): 0, or the error code."""
    name = "SymResolverUpdateModule" if dwarf else "SymResolverUpdateModuleNoDwarf"
    return _code(
        _call(name, cint(pid, "pid"), to_bytes(module, "module"), _ulong(startAddr, "startAddr"))
    )


def map_code_addr(module, addr):
    """The symbol (with file and line) of file address <addr> of ELF file <module>
    (SymResolverMapCodeAddr), or None."""
    p = _call("SymResolverMapCodeAddr", to_bytes(module, "module"), _ulong(addr, "addr"))
    return symbols.Symbol.from_c_sym(p.contents) if p else None


def asm_code(module, startAddr, endAddr):
    """The disassembly of file addresses [startAddr, endAddr) of <module>, with source lines
    (SymResolverAsmCode): a kperf.symbols.StackAsm list (iterate it), or None."""
    p = _call(
        "SymResolverAsmCode",
        to_bytes(module, "module"),
        _ulong(startAddr, "startAddr"),
        _ulong(endAddr, "endAddr"),
    )
    if not p:
        return None
    try:
        return symbols.StackAsm.from_c_stack_asm(p)
    finally:
        _lib.fn("FreeAsmStack")(p)


def _malloced_text(name, *args):
    out = ctypes.c_char_p()
    r = _call(name, *args, ctypes.byref(out))
    if r != 0:
        return None
    try:
        return text(out.value)
    finally:
        _libc_free(out)


def _libc_free(p):
    ctypes.CDLL(None).free(ctypes.cast(p, ctypes.c_void_p))


def asm_text(module, startAddr, endAddr):
    """The disassembly of [startAddr, endAddr) of <module> as text, one instruction a line
    (GetAsmCodeByAddr), or None."""
    return _malloced_text(
        "GetAsmCodeByAddr",
        to_bytes(module, "module"),
        _ulong(startAddr, "startAddr"),
        _ulong(endAddr, "endAddr"),
    )


def build_id(module):
    """The GNU build-id of ELF file <module> as hex (SymGetBuildId), or None."""
    return _malloced_text("SymGetBuildId", to_bytes(module, "module"))


__all__ = [
    "Symbol",
    "Stack",
    "record_kernel",
    "record_module",
    "get_stack",
    "get_symbol",
    "free_module",
    "destroy",
    "record_elf",
    "update_module",
    "map_code_addr",
    "asm_code",
    "asm_text",
    "build_id",
]

