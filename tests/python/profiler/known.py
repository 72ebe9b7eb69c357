"""A program with known profiler objects and known syscalls, for test_profiler.py:
    known.py OUTDIR [extra set_config keyword=value ...]
writes OUTDIR/trace.json (the session's file) and OUTDIR/dumps.json / dumps.txt. Facts: the
Task "step" runs 7 times, each making 3 getppid calls; the Frame "inner" (one getsid call)
nests in the Frame "outer"; the Counter "items" is recorded as 10 12 14 16 18 20 17 18 16,
then 116 while paused (not recorded), then 16; the Marker "ready" marks 3 times; mstx marks "mstx-on"
(recorded) and "mstx-paused" (not); the paused section runs a Task "paused-task" and 11
getppid calls that must not appear.
"""

import ast
import os
import sys

import kperf.mstx as mstx
from kperf import profiler

out = sys.argv[1]
extra = {k: ast.literal_eval(v) for k, v in (a.split("=", 1) for a in sys.argv[2:])}
profiler.set_config(profile_syscalls=True, profile_markers=True, aggregate_stats=True,
                    filename=os.path.join(out, "trace.json"), continuous_dump=False, **extra)
profiler.set_state("run")
dom = profiler.Domain("wl")
step = profiler.Task(dom, "step")
for _ in range(7):
    with step:
        for _ in range(3):
            os.getppid()
outer, inner = profiler.Frame(dom, "outer"), profiler.Frame(dom, "inner")
outer.start()
inner.start()
os.getsid(0)
inner.stop()
outer.stop()
items = profiler.Counter(dom, "items", 10)
for _ in range(5):
    items += 2
items -= 3
items.increment()
items.decrement(2)
ready = profiler.Marker(dom, "ready")
for scope in ("process", "thread", "global"):
    ready.mark(scope)
ev = profiler.Event("ev")
ev.start()
ev.stop()
mstx.mark("mstx-on")

profiler.pause()
with profiler.Task(dom, "paused-task"):
    for _ in range(11):
        os.getppid()
items += 100
ready.mark()
mstx.mark("mstx-paused")
profiler.resume()
items -= 100

profiler.set_state("stop")
with open(os.path.join(out, "dumps.json"), "w") as f:
    f.write(profiler.dumps(format="json"))
with open(os.path.join(out, "dumps.txt"), "w") as f:
    f.write(profiler.dumps(sort_by="count", ascending=True))
