"""MXNet's profiler example (shared/seeds/003, "Example usage"), unchanged but for the import
(`from kperf import profiler` for MXNet's) and the comments' sections filled with work that
the trace must show: getppid calls profiled, getpgrp calls while paused (absent), a busy
loop for CPU samples. Run in OUTDIR: writes chrome_tracing_profile.json there."""

import os
import time

from kperf import profiler


def burn(seconds):
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        n += 1
    return n


profiler.set_config(profile_all=True,
                    filename='chrome_tracing_profile.json',  # File used for chrome://tracing visualization
                    continuous_dump=True,
                    aggregate_stats=True)  # Stats printed by dumps() call

profiler.set_state('run')  # Start profiling engine
#
# Profile this section of code
#
for _ in range(4):
    os.getppid()
burn(0.3)
profiler.pause()  # Pause profiling
#
# Don't profile this section
#
for _ in range(6):
    os.getpgrp()
profiler.resume()  # Resume profiling
#
# Profile this section of code
#
for _ in range(5):
    os.getppid()
profiler.set_state('stop')  # Stop profiling engine (optional)
print(profiler.dumps())  # Print aggregate statistics if aggregate_stats was set to True
