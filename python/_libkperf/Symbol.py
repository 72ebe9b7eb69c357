"""libkperf's _libkperf.Symbol: the Symbol/Stack/AsmCode/StackAsm structs and classes, and
the symbol resolver functions by their C names (copies are returned, see ksym)."""

import ctypes

import ksym
from kperf import _cstructs as cs
from kperf._convert import to_bytes
from kperf.symbols import AsmCode, Stack, StackAsm, Symbol

from .Config import UTF_8, sym_so  # noqa: F401


def _b(v):
    return to_bytes(v, "string") if v else None


class CtypesSymbol(cs.Symbol):
    """struct Symbol, with libkperf's constructor (str arguments)."""

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
        *args,
        **kw,
    ):
        super().__init__(*args, **kw)
        self.addr, self.module, self.symbolName = addr, _b(module), _b(symbolName)
        self.mangleName, self.fileName, self.lineNum = _b(mangleName), _b(fileName), lineNum
        self.offset, self.codeMapEndAddr, self.codeMapAddr = offset, codeMapEndAddr, codeMapAddr
        self.firstLine, self.mntPoint = firstLine, _b(mntPoint)


CtypesStack = cs.Stack


class CtypesAsmCode(cs.AsmCode):
    """struct AsmCode, with libkperf's constructor."""

    def __init__(self, addr=0, code="", fileName="", lineNum=0, *args, **kw):
        super().__init__(*args, **kw)
        self.addr, self.code, self.fileName, self.lineNum = addr, _b(code), _b(fileName), lineNum


class CtypesStackAsm(cs.StackAsm):
    """struct StackAsm, with libkperf's constructor (which calls funcName fileName)."""

    def __init__(
        self, fileName="", funcStartAddr=0, functFileOffset=0, next=None, asmCode=None, *args,
        **kw
    ):
        super().__init__(*args, **kw)
        self.funcName, self.funcStartAddr, self.functFileOffset = (
            _b(fileName), funcStartAddr, functFileOffset
        )
        if next is not None:
            self.next = next if isinstance(next, ctypes._Pointer) else ctypes.pointer(next)
        if asmCode is not None:
            self.asmCode = (
                asmCode if isinstance(asmCode, ctypes._Pointer) else ctypes.pointer(asmCode)
            )

    fileName = property(lambda self: self.funcName)


def SymResolverRecordKernel():
    """int SymResolverRecordKernel()"""
    return ksym.record_kernel()


def SymResolverRecordModule(pid):
    """int SymResolverRecordModule(int pid)"""
    return ksym.record_module(pid, True)


def SymResolverRecordModuleNoDwarf(pid):
    """int SymResolverRecordModuleNoDwarf(int pid)"""
    return ksym.record_module(pid, False)


def StackToHash(pid, stackList):
    """struct Stack *StackToHash(int pid, unsigned long *stack, int nr): a Stack, or None"""
    return ksym.get_stack(pid, stackList)


def SymResolverMapAddr(pid, addr):
    """struct Symbol *SymResolverMapAddr(int pid, unsigned long addr): a Symbol, or None"""
    return ksym.get_symbol(pid, addr)


def FreeModuleData(pid):
    """void FreeModuleData(int pid)"""
    ksym.free_module(pid)


def SymResolverDestroy():
    """void SymResolverDestroy()"""
    ksym.destroy()


__all__ = [
    "CtypesSymbol",
    "Symbol",
    "CtypesStack",
    "Stack",
    "CtypesAsmCode",
    "AsmCode",
    "CtypesStackAsm",
    "StackAsm",
    "SymResolverRecordKernel",
    "SymResolverRecordModule",
    "SymResolverRecordModuleNoDwarf",
    "StackToHash",
    "SymResolverMapAddr",
    "FreeModuleData",
    "SymResolverDestroy",
]
