"""A session with continuous_dump that never ends: Tasks in a loop, a line on stdout once the
file holds some; test_profiler.py kills it (SIGKILL) and reads the file.
    killed.py FILE"""

import json
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
            with open(path) as f:
                doc = json.load(f)
        except ValueError:
            continue
        if any(e["name"] == "iteration" for e in doc["traceEvents"]):
            print("dumped", flush=True)
            said = True
