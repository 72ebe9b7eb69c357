"""Inline frames in kperf's results, a kperf-bpf addition: PmuAttr(inlineFrames=True) with a
DWARF symbolMode gives each inlined call a frame of its own (Symbol.inlined True), innermost
first, before the function it was inlined into; without it the stacks are libkperf's.

The workload (tests/workloads/inline_cxx.cpp, built -O2) burns CPU in leaf(), inlined into
mid(), into top(), into chain(); the INL_* comments of its source give the lines.
"""

import os
import subprocess

import kperf
from conftest import BUILD, REPO, requires

pytestmark = requires("KperfOpen", "KperfSymbolGetInfo")

SAMPLING = kperf.PmuTaskType.SAMPLING
SOURCE = os.path.join(REPO, "tests", "workloads", "inline_cxx.cpp")


def line_of(tag):
    with open(SOURCE) as f:
        for n, text in enumerate(f, 1):
            if tag in text:
                return n
    raise AssertionError(f"{tag} not in {SOURCE}")


def profile(inline):
    """Sample inline_cxx --ms 700 with lines (and inline frames); the records. The workload
    waits for a byte on stdin, sent once sampling is enabled: on a loaded machine opening took
    longer than its 700 ms, and it exited before it could be sampled."""
    p = subprocess.Popen([os.path.join(BUILD, "workloads", "inline_cxx"), "--ms", "700", "--wait"],
                         stdin=subprocess.PIPE)
    pd = -1
    try:
        attr = kperf.PmuAttr(
            evtList=["cpu-clock"],
            pidList=[p.pid],
            sampleRate=1000,
            useFreq=True,
            callStack=True,
            symbolMode=kperf.SymbolMode.RESOLVE_ELF_DWARF,
            inlineFrames=inline,
        )
        pd = kperf.open(SAMPLING, attr)
        assert pd > 0, kperf.error()
        assert kperf.enable(pd) == 0, kperf.error()
        p.stdin.write(b"g")
        p.stdin.close()
        assert p.wait(timeout=30) == 0
        assert kperf.disable(pd) == 0, kperf.error()
        data = kperf.read(pd)
        assert data.len > 0, kperf.error()
        return [[f.symbol for f in d.stack or []] for d in data if d.count]
    finally:
        if pd > 0:
            kperf.close(pd)
        p.kill()
        p.wait()


def test_inline_frames_in_stacks():
    chain = [
        ("leaf", True, line_of("INL_LEAF")),
        ("mid", True, line_of("INL_MID_CALL")),
        ("top", True, line_of("INL_TOP_CALL")),
        ("chain(unsigned int)", False, line_of("INL_CHAIN_CALL")),
    ]
    seen = 0
    for stack in profile(True):
        frames = [(s.symbolName, s.inlined, s.lineNum) for s in stack]
        names = [f[:2] for f in frames]
        if ("leaf", True) in names:
            i = names.index(("leaf", True))
            assert frames[i : i + 4] == chain, frames
            seen += 1
        for s in stack:
            # every inline frame is followed, at the same address, by its caller's frames
            if s.inlined:
                # now_ms() is inlined into main's timing loop: a sample can land there too
                assert s.symbolName in ("leaf", "mid", "top", "ns::Acc<long>::add(long)",
                                        "operator()", "apply<with_lambda(int)::<lambda(int)> >",
                                        "now_ms")
    assert seen > 0, "no sample in the inlined leaf()"


def test_no_inline_frames_unless_asked():
    seen = 0
    for stack in profile(False):
        for s in stack:
            assert not s.inlined
            assert s.symbolName not in ("leaf", "mid", "top")
            # libkperf's answer: the function's name, the innermost line
            if s.symbolName == "chain(unsigned int)" and s.lineNum == line_of("INL_LEAF"):
                seen += 1
    assert seen > 0, "no sample of chain() at leaf()'s line"


def test_inline_frames_need_dwarf():
    attr = kperf.PmuAttr(
        evtList=["cpu-clock"],
        pidList=[os.getpid()],
        sampleRate=100,
        useFreq=True,
        callStack=True,
        symbolMode=kperf.SymbolMode.RESOLVE_ELF,
        inlineFrames=True,
    )
    assert kperf.open(SAMPLING, attr) == -1
    assert kperf.errorno() == kperf.Error.KPERF_ERR_INVALID_ATTR
    assert kperf.error() == (
        "inlineFrames needs symbolMode RESOLVE_ELF_DWARF or RESOLVE_DELAY_DWARF: inline "
        "frames come from DWARF"
    )


def test_python_symbol_is_not_inlined():
    assert kperf.Symbol().inlined is False
