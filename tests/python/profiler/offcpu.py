"""A session with off-CPU slices (profile_offcpu) and known waits: the main thread sleeps
5 times for 5 ms, each inside a Task "nap", then computes for 50 ms inside a Task "compute"
without waiting for anything. No other thread of the program takes the GIL (no continuous
dump), so the sleeps are the only waits of those Tasks.
    offcpu.py OUTDIR"""

import os
import sys
import time

from kperf import profiler

out = sys.argv[1]
profiler.set_config(profile_offcpu=True, offcpu_min_us=1000, continuous_dump=False,
                    filename=os.path.join(out, "trace.json"))
profiler.set_state("run")
dom = profiler.Domain("wl")
nap = profiler.Task(dom, "nap")
for _ in range(5):
    with nap:
        time.sleep(0.005)
with profiler.Task(dom, "compute"):
    t0 = time.monotonic()
    x = 0
    while time.monotonic() - t0 < 0.05:
        x += 1
profiler.set_state("stop")
