"""profiler_overhead.py - what kperf.profiler costs a Python program.

1. A loop with a Task per iteration (`with task: pass`): the cost of one Task start/stop in
   µs, with no session (the objects check one flag) and with a session running (a clock read
   and a list append each end), beside the bare loop.
2. A syscall-heavy Python workload (getppid, stat and a 64-byte read per iteration): its
   time under a profile_all session (every source this machine supports: syscalls, CPU
   samples with stacks, markers, off-CPU slices, the heap; what is new appended to the file
   every dump_period seconds) as a ratio to no session; the same without continuous_dump,
   and with the syscalls only and the memory source only, to tell the parts apart.

Each measurement runs in a fresh interpreter (a session's BPF programs loaded before the
clock starts); rounds are interleaved and medians printed. Usage (root, built tree):
    sudo python3 bench/profiler_overhead.py [--tasks 200000] [--iters 100000] [--rounds 5]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BUILD = os.environ.get("KPERF_BUILD") or os.path.join(REPO, "build")


def child(mode, n, out):
    sys.path.insert(0, os.path.join(REPO, "python"))
    from kperf import profiler

    dom = profiler.Domain("bench")
    task = profiler.Task(dom, "t")
    if mode in ("task-on", "sys-all", "sys-all-nodump", "sys-syscalls", "sys-memory"):
        kw = {"task-on": {"continuous_dump": False}, "sys-all": {"profile_all": True},
              "sys-all-nodump": {"profile_all": True, "continuous_dump": False},
              "sys-syscalls": {"profile_syscalls": True, "continuous_dump": False},
              "sys-memory": {"profile_memory": True, "continuous_dump": False}}[mode]
        profiler.set_config(filename=os.path.join(out, mode + ".json"), **kw)
        profiler.set_state("run")
    fd = os.open("/proc/self/stat", os.O_RDONLY)
    t0 = time.perf_counter()
    if mode == "bare":
        for _ in range(n):
            pass
    elif mode.startswith("task"):
        for _ in range(n):
            with task:
                pass
    else:
        for _ in range(n):
            os.getppid()
            os.stat("/")
            os.pread(fd, 64, 0)
    t = time.perf_counter() - t0
    os.close(fd)
    profiler.set_state("stop")
    print(json.dumps({"seconds": t}))


def run(mode, n, out):
    env = dict(os.environ)
    env.setdefault("KPERF_BPF_LIB", os.path.join(BUILD, "lib", "libkperf-bpf.so"))
    p = subprocess.run([sys.executable, __file__, "--child", mode, str(n), out],
                       capture_output=True, text=True, env=env, timeout=600)
    if p.returncode:
        sys.exit(f"profiler_overhead: {mode} failed:\n{p.stderr}")
    return json.loads(p.stdout.splitlines()[-1])["seconds"]


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=200000)
    ap.add_argument("--iters", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    modes = {"bare": a.tasks, "task-off": a.tasks, "task-on": a.tasks, "sys-none": a.iters,
             "sys-all": a.iters, "sys-all-nodump": a.iters, "sys-syscalls": a.iters,
             "sys-memory": a.iters}
    times = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as out:
        for _ in range(a.rounds):
            for m, n in modes.items():
                times[m].append(run(m, n, out))
    med = {m: statistics.median(v) for m, v in times.items()}
    us = {m: med[m] / modes[m] * 1e6 for m in modes}
    print(f"Task start/stop, {a.tasks} per run, median of {a.rounds} runs:")
    print(f"  bare loop            {us['bare']:8.3f} us/iteration")
    print(f"  no session           {us['task-off'] - us['bare']:8.3f} us per start/stop")
    print(f"  session running      {us['task-on'] - us['bare']:8.3f} us per start/stop")
    print(f"syscall-heavy loop (getppid + stat + pread), {a.iters} iterations:")
    print(f"  no session           {med['sys-none']:8.3f} s ({us['sys-none']:.2f} us/iter)")
    print(f"  profile_all session  {med['sys-all']:8.3f} s ({us['sys-all']:.2f} us/iter)")
    print(f"  ratio profile_all / none: {med['sys-all'] / med['sys-none']:.2f}")
    print(f"  ratio profile_all without continuous_dump / none: "
          f"{med['sys-all-nodump'] / med['sys-none']:.2f}")
    print(f"  ratio profile_syscalls only (no dump) / none: "
          f"{med['sys-syscalls'] / med['sys-none']:.2f}")
    print(f"  ratio profile_memory only (no dump) / none: "
          f"{med['sys-memory'] / med['sys-none']:.2f}")


if __name__ == "__main__":
    main()
