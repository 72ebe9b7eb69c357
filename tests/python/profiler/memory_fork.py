"""The memory source follows children: inside a Task "fork" the script forks a child that
allocates a 7 MiB block and exits; the child's allocation is on the timeline under its own
pid, with its own heap counter. The child's pid goes to OUTDIR/child.
    memory_fork.py OUTDIR        -> OUTDIR/trace.json, OUTDIR/child"""

import os
import sys

from kperf import profiler

out = sys.argv[1]
profiler.set_config(profile_memory=True, continuous_dump=False,
                    filename=os.path.join(out, "trace.json"))
profiler.set_state("run")
dom = profiler.Domain("wl")
with profiler.Task(dom, "fork"):
    pid = os.fork()
    if pid == 0:
        block = bytearray(7 << 20)
        del block
        os._exit(0)
    _, status = os.waitpid(pid, 0)
profiler.set_state("stop")
with open(os.path.join(out, "child"), "w") as f:
    f.write(f"{pid} {status}\n")
