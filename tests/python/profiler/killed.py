"""A session with continuous_dump that never ends: Tasks in a loop, a line on stdout once the
file (a JSON Array Format stream, read with profiler.recover) holds some; test_profiler.py
kills it (SIGKILL) and reads the file.
    killed.py FILE"""

import os
import sys
import time

from kperf import profiler

path = sys.argv[1]
profiler.set_config(profile_syscalls=True, filename=path, continuous_dump=True,
                    dump_period=0.1)
profiler.set_state("run")
dom = profiler.Domain("loop")
task = profiler.Task(dom, "iteration")
said = False
while True:
    with task:
        os.getppid()
    time.sleep(0.001)
    if not said:
        try:
            evs = profiler.recover(path)
        except ValueError:
            continue
        if sum(e["name"] == "iteration" for e in evs) >= 3 and \
                any(e["name"] == "getppid" for e in evs):
            print("dumped", flush=True)
            said = True
