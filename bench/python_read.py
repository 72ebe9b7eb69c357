"""python_read.py - the cost of iterating kperf.read()'s records in Python.

A 10 s, 999 Hz cpu-clock profile with stacks of cpuburn (two threads) is read once; its
records are then iterated, rounds interleaved, by this package and, when libkperf's Python
package is given (--libkperf <its python/modules directory>), by libkperf's own classes over
the very same C array (libkperf's package is loaded on libkperf-bpf.so, which has libkperf's
struct layouts). Two passes are timed: iterating only, and iterating while reading what a
profile report reads (evt, ts, pid, tid, cpu, period, and every frame's symbol name and
module). Prints medians, per-record costs and the ratio; both packages must count the same
records and frames.

Usage: sudo python3 bench/python_read.py [--seconds 10] [--freq 999] [--rounds 5]
                                         [--libkperf /path/to/libkperf/python/modules]
Needs the build tree (make) and root.
"""

import argparse
import ctypes
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BUILD = os.environ.get("KPERF_BUILD") or os.path.join(REPO, "build")
LIB = os.path.join(BUILD, "lib", "libkperf-bpf.so")


def load_libkperf(modules_dir, tmp):
    """libkperf's kperf/_libkperf on libkperf-bpf.so, imported and then renamed in
    sys.modules so that this package can be imported under the same names."""
    for name in ("kperf", "ksym", "_libkperf"):
        shutil.copytree(os.path.join(modules_dir, name), os.path.join(tmp, name))
    for so in ("libsym.so", "libkperf.so"):
        os.symlink(os.path.realpath(LIB), os.path.join(tmp, "_libkperf", so))
    sys.path.insert(0, tmp)
    lk = importlib.import_module("_libkperf")
    for name in list(sys.modules):
        if name.split(".")[0] in ("kperf", "ksym", "_libkperf"):
            sys.modules["libkperf_" + name] = sys.modules.pop(name)
    sys.path.remove(tmp)
    return lk


def report_pass(records, pmu_stack=True):
    """What a profile report reads from each record."""
    n = 0
    for r in records:
        r.evt, r.ts, r.pid, r.tid, r.cpu, r.period
        s = r.stack
        while s:
            sym = s.symbol
            sym.symbolName, sym.module
            s = s.next
            n += 1
    return n


def iterate_pass(records):
    n = 0
    for _ in records:
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--freq", type=int, default=999)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--libkperf", default=os.environ.get("LIBKPERF_PYTHON"))
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="kperf-bench-")
    try:
        lk = load_libkperf(args.libkperf, tmp) if args.libkperf else None
        os.environ.setdefault("KPERF_BPF_LIB", LIB)
        sys.path.insert(0, os.path.join(REPO, "python"))
        import kperf

        burn = subprocess.Popen(
            [os.path.join(BUILD, "workloads", "cpuburn"), "--threads", "2", "--ms",
             str(int(args.seconds * 1000 + 2000))],
            stdout=subprocess.DEVNULL,
        )
        attr = kperf.PmuAttr(evtList=["cpu-clock"], pidList=[burn.pid], sampleRate=args.freq,
                             useFreq=True, callStack=True,
                             symbolMode=kperf.SymbolMode.RESOLVE_ELF)
        pd = kperf.open(kperf.PmuTaskType.SAMPLING, attr)
        if pd < 0:
            sys.exit(f"open: {kperf.error()}")
        time.sleep(0.2)
        kperf.enable(pd)
        time.sleep(args.seconds)
        kperf.disable(pd)
        t0 = time.perf_counter()
        data = kperf.read(pd)
        read_s = time.perf_counter() - t0
        burn.kill()
        burn.wait()
        n = data.len
        frames = report_pass(data)
        print(f"profile: {n} records, {frames} frames ({frames / max(n, 1):.1f} per record); "
              f"kperf.read itself {read_s:.3f} s")

        ptr = data.pointer()

        def ours():
            # a new PmuData over the same array: nothing cached from an earlier pass
            view = kperf.PmuData(ptr, n)
            return view

        def ours_done(view):
            view._ptr = None  # the array belongs to `data`

        def theirs():
            p = ctypes.cast(ptr, ctypes.POINTER(lk.Pmu.CtypesPmuData))
            return lk.PmuData(p, n)

        def theirs_done(view):
            view._PmuData__pointer = None  # the array belongs to `data`

        sides = [("kperf-bpf", ours, ours_done)]
        if lk:
            sides.append(("libkperf", theirs, theirs_done))
        results = {(s, p): [] for s, _, _ in sides for p in ("iterate", "report")}
        counts = {}
        for _ in range(args.rounds):
            for name, make, done in sides:
                for pname, fn in (("iterate", iterate_pass), ("report", report_pass)):
                    view = make()
                    records = view.iter
                    t0 = time.perf_counter()
                    got = fn(records)
                    results[(name, pname)].append(time.perf_counter() - t0)
                    counts.setdefault((name, pname), set()).add(got)
                    done(view)
        # both packages must have walked the same records and frames, or the ratio means nothing
        for pname, want in (("iterate", n), ("report", frames)):
            for name, _, _ in sides:
                if counts[(name, pname)] != {want}:
                    sys.exit(f"{name} {pname}: counted {sorted(counts[(name, pname)])}, "
                             f"expected {want}")
        # this package again over one PmuData: strings and stacks decoded on the first pass
        warm = data
        report_pass(warm)
        t0 = time.perf_counter()
        report_pass(warm)
        warm_s = time.perf_counter() - t0

        print(f"{'pass':<10}{'package':<12}{'seconds':>10}{'us/record':>12}")
        med = {}
        for (name, pname), ts in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            med[(name, pname)] = m = statistics.median(ts)
            print(f"{pname:<10}{name:<12}{m:>10.4f}{m / n * 1e6:>12.2f}")
        print(f"{'report':<10}{'kperf-bpf':<12}{warm_s:>10.4f}{warm_s / n * 1e6:>12.2f}"
              "  (second pass over the same PmuData)")
        if lk:
            for pname in ("iterate", "report"):
                ratio = med[("kperf-bpf", pname)] / med[("libkperf", pname)]
                print(f"ratio kperf-bpf / libkperf, {pname}: {ratio:.2f}x (target <= 0.5x)")
        data.free()
        kperf.close(pd)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
