"""kperf.profiler's API without the kernel's sources (no BPF): every bad input with its
message, the life of sessions (two in one process, stop without run, dump with nothing,
reset, dump while running), objects outside a session, threads, Tasks that overlap without
nesting, and the statistics' sorting and percentiles on exact numbers.
"""

import json
import os
import subprocess
import sys
import threading

import pytest
from chrome_trace import check, events
from profiler_testutil import env, fresh  # noqa: F401

from kperf import profiler
from kperf.profiler import ProfilerError, _stats


def fails(fn, message, *args, **kwargs):
    with pytest.raises(ProfilerError) as e:
        fn(*args, **kwargs)
    assert str(e.value) == message


@pytest.mark.parametrize("kwargs,message", [
    ({"profile_everything": True},
     "set_config: unknown keyword 'profile_everything' (known: aggregate_stats, "
     "continuous_dump, dump_period, filename, memory_big_bytes, offcpu_min_us, profile_all, "
     "profile_api, profile_cpu, profile_imperative, profile_markers, profile_memory, "
     "profile_offcpu, profile_process, profile_symbolic, profile_syscalls, sample_freq)"),
    ({"filename": ""}, "set_config: filename must be a non-empty path, not ''"),
    ({"filename": 3}, "set_config: filename must be a non-empty path, not 3"),
    ({"dump_period": 0}, "set_config: dump_period must be a number of seconds > 0, not 0"),
    ({"dump_period": "1"}, "set_config: dump_period must be a number of seconds > 0, not '1'"),
    ({"profile_all": "yes"}, "set_config: profile_all must be True or False, not 'yes'"),
    ({"profile_process": "server"},
     "set_config: profile_process 'server': only 'worker' (this process) exists outside "
     "MXNet's parameter servers"),
    ({"sample_freq": 0}, "set_config: sample_freq must be 1..100000 samples a second, not 0"),
    ({"offcpu_min_us": 0},
     "set_config: offcpu_min_us must be 1..60000000 microseconds, not 0"),
    ({"memory_big_bytes": 0},
     "set_config: memory_big_bytes must be a size in bytes >= 1, not 0"),
])
def test_set_config_refuses(fresh, kwargs, message):
    fails(profiler.set_config, message, **kwargs)
    assert profiler._cfg == profiler._config.DEFAULTS  # nothing of it was kept


def test_mxnet_keywords_accepted(fresh):
    profiler.set_config(profile_symbolic=True, profile_imperative=True, profile_api=False,
                        profile_memory=False, profile_process="worker", dump_period=0.5)
    assert profiler._cfg["dump_period"] == 0.5


def test_profile_all_turns_on_what_is_supported():
    cfg = profiler._config.check(profiler._config.DEFAULTS, {"profile_all": True})
    assert profiler._config.sources(cfg) == ({
        "profile_syscalls": True, "profile_cpu": True, "profile_markers": True,
        "profile_offcpu": True, "profile_memory": True}, {})


# what a kernel lacks, made so for one interpreter: KPERF_BPF_NO_RINGBUF=1 is a kernel before
# 5.8 (no ring buffer), KPERF_BPF_BTF naming no file a kernel without BTF
LACKING = r"""
import json, sys
from kperf import profiler
from kperf.profiler import ProfilerError, _config
on, skipped = _config.sources(_config.check(_config.DEFAULTS, {"profile_all": True}))
refused = {}
for k in sorted(skipped):
    try:
        profiler.set_config(**{k: True})
    except ProfilerError as e:
        refused[k] = [e.errno, str(e)]
print(json.dumps({"on": on, "skipped": {k: [e.errno, e.message] for k, e in skipped.items()},
                  "refused": refused, "cfg": profiler._cfg == _config.DEFAULTS}))
"""


def lacking(**extra):
    e = env()
    e.update(extra)
    p = subprocess.run([sys.executable, "-c", LACKING], capture_output=True, text=True,
                       env=e, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_profile_all_leaves_out_what_the_kernel_lacks():
    """No ring buffer (a kernel before 5.8): profile_all has no source left and says why it
    left out each (LIBPERF_ERR_KERNEL_NOT_SUPPORT, 1016); each asked for by name is refused
    with the same code and sentence, and nothing of the refused keyword is kept."""
    rel = os.uname().release
    r = lacking(KPERF_BPF_NO_RINGBUF="1")
    assert r["on"] == {"profile_syscalls": False, "profile_cpu": False,
                       "profile_markers": False, "profile_offcpu": False,
                       "profile_memory": False}
    names = {"profile_syscalls": "syscalls", "profile_cpu": "CPU samples",
             "profile_markers": "markers", "profile_offcpu": "off-CPU slices",
             "profile_memory": "memory"}
    assert r["skipped"] == {
        k: [1016, f"{n}: kernel {rel} has no BPF ring buffer (5.8): this source needs Linux "
                  "5.8 or later"] for k, n in names.items()}
    assert r["refused"] == {
        k: [1016, f"set_config: {k}: this machine cannot give it: [1016] {n}: kernel {rel} "
                  "has no BPF ring buffer (5.8): this source needs Linux 5.8 or later"]
        for k, n in names.items()}
    assert r["cfg"]


def test_profile_all_without_kernel_btf():
    """No kernel BTF: the CPU samples and the memory source (CO-RE programs) are left out."""
    r = lacking(KPERF_BPF_BTF="/nonexistent/vmlinux")
    assert [k for k, v in r["on"].items() if not v] == ["profile_cpu", "profile_memory"]
    assert sorted(r["skipped"]) == ["profile_cpu", "profile_memory"]
    assert r["skipped"]["profile_memory"][0] == 1016
    assert r["skipped"]["profile_memory"][1].startswith(
        f"memory: kernel {os.uname().release} has no kernel BTF (CO-RE, tp_btf) (5.5, "
        "CONFIG_DEBUG_INFO_BTF; /sys/kernel/btf/vmlinux, or a file named by KPERF_BPF_BTF)")
    assert r["refused"]["profile_cpu"][1].startswith(
        "set_config: profile_cpu: this machine cannot give it: [1016] CPU samples: kernel ")


def test_states_and_calls_without_a_session(fresh, tmp_path):
    fails(profiler.set_state, "set_state: unknown state 'go' ('run' or 'stop')", "go")
    fails(profiler.set_state, "set_state: profile_process 'server': only 'worker' (this "
          "process) exists outside MXNet's parameter servers", "run", "server")
    os.chdir(tmp_path)
    profiler.set_state("stop")  # stop without run: nothing, no file
    assert profiler.state() == "stop" and os.listdir(tmp_path) == []
    fails(profiler.pause, "pause: no session is running (set_state('run') first)")
    fails(profiler.resume, "resume: no session is running (set_state('run') first)")
    fails(profiler.dump, "dump: nothing to dump: no session ran (set_state('run') first)")
    fails(profiler.dumps, "dumps: aggregate statistics are off: "
          "set_config(aggregate_stats=True) before set_state('run')")
    fails(profiler.dumps, "dumps: unknown format 'xml' ('table' or 'json')", format="xml")
    fails(profiler.dumps, "dumps: unknown sort_by 'mean' (one of: total, avg, min, max, "
          "count)", sort_by="mean")


def test_unwritable_filename(fresh, tmp_path):
    profiler.set_config(filename="/nonexistent-dir/p.json")
    fails(profiler.set_state, "set_state('run'): cannot write the profile "
          "'/nonexistent-dir/p.json': No such file or directory", "run")
    assert profiler.state() == "stop"
    profiler.set_config(filename=str(tmp_path))
    fails(profiler.set_state, f"set_state('run'): cannot write the profile '{tmp_path}': "
          "Is a directory", "run")
    assert profiler.state() == "stop"


def test_empty_session_dumps_a_valid_file(fresh, tmp_path):
    path = tmp_path / "empty.json"
    profiler.set_config(filename=str(path), aggregate_stats=True)
    profiler.set_state("run")
    profiler.set_state("stop")
    doc = check(path)
    assert [e["ph"] for e in doc["traceEvents"]] == ["M"]  # the process's name only
    assert doc["otherData"]["objects"] == 0 and doc["otherData"]["sources"] == []
    os.unlink(path)
    profiler.dump()  # the last session, again
    assert check(path) == doc
    stats = json.loads(profiler.dumps(format="json"))
    assert stats == {"Unit": {"Time": "ms"}, "Time": {}, "Syscalls": {}, "Counters": {},
                     "Markers": {}}
    assert profiler.dumps() == "\nProfile Statistics:\n\tNote the difference in units for " \
        "different entries.\n"


def test_set_config_while_running(fresh, tmp_path):
    profiler.set_config(filename=str(tmp_path / "r.json"))
    profiler.set_state("run")
    fails(profiler.set_config, "set_config: a session is running: set_state('stop') first",
          filename="x.json")
    profiler.set_state("run")  # running already: nothing
    assert profiler.state() == "run"


def test_two_sessions_reset_and_outside_objects(fresh, tmp_path):
    dom = profiler.Domain("d")
    a, b = profiler.Task(dom, "a"), profiler.Task(dom, "b")
    with a:  # no session: nothing
        pass
    profiler.set_config(filename=str(tmp_path / "1.json"), aggregate_stats=True,
                        continuous_dump=False)
    profiler.set_state("run")
    for _ in range(2):
        with a:
            pass
    a.start()  # started in session 1, stopped in session 2: dropped
    profiler.set_state("stop")
    profiler.set_config(filename=str(tmp_path / "2.json"))
    profiler.set_state("run")
    a.stop()
    for _ in range(3):
        with b:
            pass
    profiler.set_state("stop")
    with b:  # after: nothing
        pass
    one, two = check(tmp_path / "1.json"), check(tmp_path / "2.json")
    assert [e["name"] for e in events(one, "X")] == ["a", "a"]
    assert [e["name"] for e in events(two, "X")] == ["b", "b", "b"]
    stats = json.loads(profiler.dumps(format="json", reset=True))
    assert {k: v["Total Count"] for k, v in stats["Time"]["d"].items()} == {"a": 2, "b": 3}
    assert json.loads(profiler.dumps(format="json"))["Time"] == {}


def test_dump_not_finished_keeps_running(fresh, tmp_path):
    path = tmp_path / "d.json"
    profiler.set_config(filename=str(path), continuous_dump=False)
    profiler.set_state("run")
    dom = profiler.Domain("d")
    with profiler.Task(dom, "first"):
        pass
    profiler.dump(finished=False)
    assert profiler.state() == "run"
    assert [e["name"] for e in events(check(path), "X")] == ["first"]
    with profiler.Task(dom, "second"):
        pass
    profiler.dump()  # finished: the session ends
    assert profiler.state() == "stop"
    assert [e["name"] for e in events(check(path), "X")] == ["first", "second"]


def test_pause_drops_objects(fresh, tmp_path):
    path = tmp_path / "p.json"
    profiler.set_config(filename=str(path), aggregate_stats=True)
    profiler.set_state("run")
    dom = profiler.Domain("d")
    c = profiler.Counter(dom, "c")
    t = profiler.Task(dom, "across")
    t.start()
    profiler.pause()
    profiler.pause()  # paused already: nothing
    c += 5
    profiler.Marker(dom, "m").mark()
    with profiler.Event("during"):
        pass
    profiler.resume()
    profiler.resume()  # not paused: nothing
    t.stop()  # a pause in between: dropped
    c += 1
    profiler.set_state("stop")
    doc = check(path)
    assert events(doc, "X") == [] and events(doc, "i") == []
    assert [e["args"]["c"] for e in events(doc, "C")] == [6]
    (p,) = doc["otherData"]["paused"]
    assert p[0] <= p[1]


def test_threads_and_overlapping_tasks(fresh, tmp_path):
    path = tmp_path / "t.json"
    profiler.set_config(filename=str(path))
    profiler.set_state("run")
    dom = profiler.Domain("d")
    x, y = profiler.Task(dom, "x"), profiler.Task(dom, "y")
    x.start()
    y.start()
    x.stop()  # x and y overlap without nesting: y becomes an async pair
    y.stop()
    tids = []

    def worker():
        tids.append(threading.get_native_id())
        with profiler.Frame(dom, "on-worker"):
            pass

    th = threading.Thread(target=worker, name="worker-1")
    th.start()
    th.join()
    profiler.set_state("stop")
    doc = check(path)
    assert [e["name"] for e in events(doc, "X")] == ["x", "on-worker"]
    (b,) = events(doc, "b")
    (e,) = events(doc, "e")
    assert b["name"] == e["name"] == "y" and b["id2"] == e["id2"]
    (w,) = events(doc, "X", name="on-worker")
    assert w["tid"] == tids[0] != os.getpid()
    names = {e["tid"]: e["args"]["name"] for e in events(doc, "M") if e["name"] == "thread_name"}
    assert names[tids[0]] == "worker-1"


def test_objects_refuse_bad_input():
    dom = profiler.Domain("d")
    fails(profiler.Domain, "Domain: the name must be a non-empty str, not ''", "")
    fails(profiler.Task, "Task: the domain must be a kperf.profiler.Domain, not str", "d", "t")
    fails(profiler.Frame, "Frame: the name must be a non-empty str, not None", dom, None)
    fails(profiler.Event, "Event: the name must be a non-empty str, not 5", 5)
    fails(profiler.Counter, "Counter: the value must be a number, not 'x'", dom, "c", "x")
    c = profiler.Counter(dom, "c", 2)
    fails(c.increment, "Counter: the delta must be a number, not None", None)
    c += 3
    c -= 1.5
    assert c.value == 3.5 and str(c) == "c=3.5"
    fails(profiler.Marker(dom, "m").mark, "Marker.mark: unknown scope 'world' (one of: "
          "global, process, thread, task, marker)", "world")


def test_percentiles_and_sorting_exact():
    st = _stats.Stats()
    for ms in range(1, 101):
        st.span("d", "hundred", ms * 1000000)
    st.span("d", "one", 500 * 1000000)
    for _ in range(3):
        st.span("d", "three", 1000000)
    agg = _stats.aggregate(st, "total", False)
    h = agg["Time"]["d"]["hundred"]
    assert h == {"Total Count": 100, "Time (ms)": 5050.0, "Min Time (ms)": 1.0,
                 "Max Time (ms)": 100.0, "Avg Time (ms)": 50.5, "P50 (ms)": 50.0,
                 "P99 (ms)": 99.0}
    assert list(agg["Time"]["d"]) == ["hundred", "one", "three"]
    assert list(_stats.aggregate(st, "count", True)["Time"]["d"]) == ["one", "three", "hundred"]
    assert list(_stats.aggregate(st, "max", False)["Time"]["d"]) == ["one", "hundred", "three"]
    assert list(_stats.aggregate(st, "avg", True)["Time"]["d"]) == ["three", "hundred", "one"]
    assert list(_stats.aggregate(st, "min", True)["Time"]["d"]) == ["hundred", "three", "one"]


def test_session_at_exit_is_written(tmp_path):
    """A session still running when the program ends is stopped and written."""
    code = ("from kperf import profiler\n"
            "profiler.set_config(filename='exit.json', continuous_dump=False)\n"
            "profiler.set_state('run')\n"
            "with profiler.Task(profiler.Domain('d'), 'last'):\n    pass\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env(),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert [e["name"] for e in events(check(tmp_path / "exit.json"), "X")] == ["last"]


def test_forked_child_records_nothing(fresh, tmp_path):
    path = tmp_path / "f.json"
    profiler.set_config(filename=str(path), continuous_dump=False)
    profiler.set_state("run")
    dom = profiler.Domain("d")
    with profiler.Task(dom, "parent"):
        pass
    pid = os.fork()
    if pid == 0:  # the child: its objects and its exit write nothing
        code = 1
        try:
            with profiler.Task(dom, "child"):
                pass
            code = 0 if profiler.state() == "stop" else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    profiler.set_state("stop")
    assert [e["name"] for e in events(check(path), "X")] == ["parent"]
