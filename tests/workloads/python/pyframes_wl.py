"""pyframes_wl.py - a CPython workload with known behaviour for the Python-frame tests
(tests/integration/test_pyframes.c) and bench/pyframes_overhead.sh.

  shares SECONDS [bz2]
                   the main thread runs heavy(), outer() (which calls inner()) and encode()
                   (json.dumps: the _json C encoder) in turn for SECONDS of its CPU time,
                   measures each one's thread CPU time and prints, on its last line,
                   "shares heavy=H outer=O inner=I encode=E" (percent of the process's CPU
                   time, startup included, as a profile of the whole process counts it);
                   with bz2, squeeze() too (bz2.compress: the _bz2 extension module, a file
                   of its own where _json is built into the interpreter, as in Debian's 3.13)
  work SECONDS     heavy(), outer() and encode() in turn, about SECONDS of CPU time of work,
                   a fixed amount; prints "work cpu=C wall=W" (its seconds, traced or
                   not: bench/pyframes_overhead.sh compares them)
  threads SECONDS  two threads named pyalpha and pybeta (their /proc comm) run alpha() and
                   beta() for SECONDS of wall time each; "ready" is printed once both are
                   named and about to run (a profiler can attach to the pid then)
  naps N           napper() calls nap() N times, which sleeps 2 ms in time.sleep
                   (clock_nanosleep, off the CPU) and allocates a bytearray of 123457 bytes
                   (one malloc of 123458: its buffer and the trailing NUL): the off-CPU,
                   syscall-stack and memory tests' Python frames
"""
import bz2
import json
import sys
import threading
import time


def heavy(n):
    t = 0
    for i in range(n):
        t += i * i % 7
    return t


def inner(n):
    t = 0
    for i in range(n):
        t ^= i << 1
    return t


INNER = [0.0]  # thread CPU time spent in inner() called by outer()


def outer(n):
    t = 0
    for i in range(n // 2):
        t += i
    t0 = time.thread_time()
    t += inner(n)
    INNER[0] += time.thread_time() - t0
    return t


DATA = [{"k%d" % i: [i, str(i), i * 0.5, None, True]} for i in range(400)]


def encode(reps):
    n = 0
    for _ in range(reps):
        n += len(json.dumps(DATA))
    return n


BLOB = b"".join(b"%d:%d;" % (i, i * i % 977) for i in range(600))


def squeeze(reps):
    n = 0
    for _ in range(reps):
        n += len(bz2.compress(BLOB, 1))
    return n


def shares(seconds, ext=None):
    spent = {"heavy": 0.0, "outer": 0.0, "inner": 0.0, "encode": 0.0}
    work = [("heavy", heavy, 30000), ("outer", outer, 30000), ("encode", encode, 8)]
    if ext == "bz2":
        spent["squeeze"] = 0.0
        work.append(("squeeze", squeeze, 1))
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        for name, fn, arg in work:
            t0 = time.thread_time()
            fn(arg)
            spent[name] += time.thread_time() - t0
    spent["inner"] = INNER[0]
    total = time.process_time()
    print("shares " + " ".join("%s=%.1f" % (k, 100 * v / total) for k, v in spent.items()))


def work(seconds):
    rounds = max(1, int(seconds * 200))  # about 5 ms of CPU a round here
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        heavy(30000)
        outer(30000)
        encode(8)
    print("work cpu=%.4f wall=%.4f" % (time.process_time() - c0, time.perf_counter() - w0))


def alpha(end):
    while time.time() < end:
        heavy(5000)


def beta(end):
    while time.time() < end:
        inner(5000)


def named(name, fn, end, ready):
    try:
        with open("/proc/self/task/%d/comm" % threading.get_native_id(), "w") as f:
            f.write(name)
    except OSError:  # no /proc (a chroot): prctl(PR_SET_NAME)
        import ctypes
        ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)
    ready.wait()
    fn(end)


def threads(seconds):
    end = time.time() + seconds
    ready = threading.Barrier(3)
    ts = [threading.Thread(target=named, args=("pyalpha", alpha, end, ready)),
          threading.Thread(target=named, args=("pybeta", beta, end, ready))]
    for t in ts:
        t.start()
    ready.wait()
    print("ready", flush=True)
    for t in ts:
        t.join()
    print("threads done")


def nap():
    time.sleep(0.002)
    return bytearray(123457)


def napper(n):
    kept = 0
    for _ in range(int(n)):
        kept += len(nap())
    print("naps done %d" % kept)


if __name__ == "__main__":
    {"shares": shares, "threads": threads, "work": work,
     "naps": napper}[sys.argv[1]](float(sys.argv[2]), *sys.argv[3:])
