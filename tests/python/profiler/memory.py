"""A session with the heap on the timeline (profile_memory): inside a Task "hold" the script
holds a 3 MiB and a 5 MiB bytearray at once (one malloc of the interpreter each), then drops
them.
    memory.py OUTDIR"""

import os
import sys

from kperf import profiler

out = sys.argv[1]
profiler.set_config(profile_memory=True, continuous_dump=False,
                    filename=os.path.join(out, "trace.json"))
profiler.set_state("run")
dom = profiler.Domain("wl")
with profiler.Task(dom, "hold"):
    a = bytearray(3 << 20)
    b = bytearray(5 << 20)
    del a, b
profiler.set_state("stop")
