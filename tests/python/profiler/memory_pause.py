"""pause() with the memory source takes the allocator's probes out of the process, resume()
puts them back: the first byte of libc's malloc and free, read from /proc/self/mem, is the
uprobe's breakpoint (int3, 0xcc on x86_64) exactly while the session runs unpaused. Inside
the pause a 6 MiB block is allocated (not recorded), after it a 4 MiB one (recorded).
    memory_pause.py OUTDIR        -> OUTDIR/trace.json, OUTDIR/bytes.json"""

import ctypes
import json
import os
import sys

from kperf import profiler

out = sys.argv[1]
libc = ctypes.CDLL("libc.so.6")  # its own malloc: CDLL(None) may give the PLT entry of a non-PIE python3
sites = {f: ctypes.cast(getattr(libc, f), ctypes.c_void_p).value for f in ("malloc", "free")}


def first_bytes():
    with open("/proc/self/mem", "rb", buffering=0) as mem:
        r = {}
        for f, addr in sites.items():
            mem.seek(addr)
            r[f] = mem.read(1)[0]
        return r


seen = {"before": first_bytes()}
profiler.set_config(profile_memory=True, continuous_dump=False,
                    filename=os.path.join(out, "trace.json"))
profiler.set_state("run")
seen["running"] = first_bytes()
profiler.pause()
seen["paused"] = first_bytes()
hidden = bytearray(6 << 20)
del hidden
profiler.resume()
seen["resumed"] = first_bytes()
dom = profiler.Domain("wl")
with profiler.Task(dom, "after"):
    shown = bytearray(4 << 20)
    del shown
profiler.set_state("stop")
seen["stopped"] = first_bytes()
with open(os.path.join(out, "bytes.json"), "w") as f:
    json.dump(seen, f)
