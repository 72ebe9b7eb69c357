"""kperf.profiler - MXNet's profiler API for any Python program, with what the kernel saw of
the process on the same timeline: its syscalls, CPU samples with their stacks, mstx markers.

    from kperf import profiler
    profiler.set_config(profile_all=True, filename="trace.json", aggregate_stats=True)
    profiler.set_state("run")
    dom = profiler.Domain("train")
    with profiler.Task(dom, "step"):          # a complete event, category "train"
        work()
    profiler.pause()                          # nothing recorded: the kernel side disabled
    ...
    profiler.resume()
    profiler.set_state("stop")                # trace.json: Chrome trace-event JSON
    print(profiler.dumps())                   # "Profile Statistics" + P50/P99 + syscalls

The file opens in ui.perfetto.dev, chrome://tracing and speedscope. set_config's sources:
profile_syscalls, profile_cpu (samples, sample_freq a second), profile_markers (kperf.mstx),
profile_all (every source this machine supports: those its kernel lacks are left out, see
skipped()); the kernel's sources need root (BPF). A source asked for by name that the
kernel lacks is refused (ProfilerError, errno LIBPERF_ERR_KERNEL_NOT_SUPPORT). A session
with none of them records the objects only. Errors are ProfilerError, saying why.

Sessions: set_state('run') starts one (a new trace; the aggregate statistics go on until
dumps(reset=True)), set_state('stop') ends it and writes the file; stopping what does not run
does nothing. With continuous_dump, what is new is appended to the file every dump_period
seconds (and at dump(finished=False)), as a JSON Array Format stream without its closing
bracket, which the trace event format makes optional: a process killed meanwhile leaves a
file that chrome://tracing and Perfetto load (profiler.recover() reads one in Python). The
session's end writes the file whole, in the object format, atomically.
"""

import atexit
import os
import tempfile
import threading

from ..perror import KperfError
from ..timeline import Timeline
from . import _config, _stats
from ._chrome import recover, us
from ._session import STATE, Session, now
from .errors import ProfilerError
from .objects import Counter, Domain, Event, Frame, Marker, Task

__all__ = ["set_config", "set_state", "pause", "resume", "dump", "dumps", "state", "skipped",
           "Domain", "Task", "Frame", "Event", "Counter", "Marker", "ProfilerError", "recover"]

_lock = threading.RLock()
_cfg = dict(_config.DEFAULTS)
_session = None  # the session running, or the last one
_running = False
_paused = False
_reset_us = 0.0  # syscalls before a dumps(reset=True) are not in the statistics


def _process(profile_process, what):
    if profile_process != "worker":
        raise ProfilerError(f"{what}: profile_process {profile_process!r}: only 'worker' (this "
                            "process) exists outside MXNet's parameter servers")


def set_config(**kwargs):
    """Configure the next session (MXNet's keywords, plus kperf-bpf's sources); what is not
    given keeps its value. Refused while a session runs."""
    global _cfg
    with _lock:
        if _running:
            raise ProfilerError("set_config: a session is running: set_state('stop') first")
        _cfg = _config.check(_cfg, kwargs)


def state():
    """'run', 'pause' or 'stop'."""
    return "pause" if _paused else "run" if _running else "stop"


def skipped():
    """The sources profile_all left out of the session running (or the last one) because
    this machine's kernel cannot give them: {"profile_memory": KperfError, ...} (the
    library's code in .errno, LIBPERF_ERR_KERNEL_NOT_SUPPORT, and its sentence in .message);
    the file's otherData.skipped says the same."""
    with _lock:
        return dict(_session.skipped) if _session is not None else {}


def _writable(path, what):
    d = os.path.dirname(os.path.abspath(path))
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(21, "Is a directory")
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=d)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise ProfilerError(f"{what}: cannot write the profile {path!r}: "
                            f"{e.strerror or e}") from e


def _write(s, what):
    try:
        s.write(s.cfg["filename"])
    except OSError as e:
        raise ProfilerError(f"{what}: cannot write the profile {s.cfg['filename']!r}: "
                            f"{e.strerror or e}") from e


def _run():
    global _session, _running, _paused
    if _running:
        return
    cfg = dict(_cfg)
    _writable(cfg["filename"], "set_state('run')")
    on, skipped = _config.sources(cfg)
    try:
        s = Session(cfg, on, Timeline, skipped)
    except KperfError as e:
        raise ProfilerError(f"set_state('run'): the kernel's sources cannot start: "
                            f"{e.message}") from e
    try:
        s.start()
    except OSError as e:
        s.close()
        raise ProfilerError(f"set_state('run'): cannot write the profile {cfg['filename']!r}: "
                            f"{e.strerror or e}") from e
    except BaseException:
        s.close()
        raise
    _session = s
    STATE.run += 1
    STATE.active = True
    _running, _paused = True, False


def _stop(what):
    global _running, _paused
    if not _running:
        return False
    STATE.active = False
    _running = _paused = False
    s = _session
    s.stop()
    STATE.stats.add_syscalls(s.kdoc, s.own_tids, _reset_us)
    s.syscalls_folded = True
    _write(s, what)
    return True


def set_state(state="stop", profile_process="worker"):
    """'run': start a session (nothing if one runs); 'stop': end it and write its file
    (nothing if none runs)."""
    _process(profile_process, "set_state")
    if state not in ("run", "stop"):
        raise ProfilerError(f"set_state: unknown state {state!r} ('run' or 'stop')")
    with _lock:
        if state == "run":
            _run()
        else:
            _stop("set_state('stop')")


def pause(profile_process="worker"):
    """Record nothing until resume(): the kernel's sources are disabled in the kernel."""
    global _paused
    _process(profile_process, "pause")
    with _lock:
        if not _running:
            raise ProfilerError("pause: no session is running (set_state('run') first)")
        if _paused:
            return
        STATE.active = False
        _paused = True
        _session.pause()


def resume(profile_process="worker"):
    """Record again after pause() (nothing if not paused)."""
    global _paused
    _process(profile_process, "resume")
    with _lock:
        if not _running:
            raise ProfilerError("resume: no session is running (set_state('run') first)")
        if not _paused:
            return
        _session.resume()
        STATE.run += 1
        STATE.active = True
        _paused = False


def dump(finished=True, profile_process="worker"):
    """Write the file of the session (the one running, or the last one) now. finished=True
    also ends the session running (MXNet: dump and stop); False leaves it running."""
    _process(profile_process, "dump")
    with _lock:
        if _session is None:
            raise ProfilerError("dump: nothing to dump: no session ran (set_state('run') "
                                "first)")
        if finished and _stop("dump"):
            return
        _write(_session, "dump")


def dumps(reset=False, format="table", sort_by="total", ascending=False):  # noqa: A002
    """MXNet's aggregate statistics (set_config(aggregate_stats=True)) of the sessions since
    the last reset, with P50/P99 and the syscall summary: a table, or JSON (format='json').
    reset=True clears them after this call."""
    global _reset_us
    if format not in _stats.FORMATS:
        raise ProfilerError(f"dumps: unknown format {format!r} ('table' or 'json')")
    if sort_by not in _stats.SORT_KEYS:
        raise ProfilerError(f"dumps: unknown sort_by {sort_by!r} (one of: "
                            f"{', '.join(_stats.SORT_KEYS)})")
    with _lock:
        cfg = _session.cfg if _session is not None else _cfg
        if not cfg["aggregate_stats"]:
            raise ProfilerError("dumps: aggregate statistics are off: "
                                "set_config(aggregate_stats=True) before set_state('run')")
        st = STATE.stats.copy()
        if _session is not None and not _session.syscalls_folded:
            st.add_syscalls(_session.kernel(), _session.own_tids, _reset_us)
        text = _stats.render(_stats.aggregate(st, sort_by, bool(ascending)), format)
        if reset:
            STATE.stats = _stats.Stats()
            _reset_us = us(now())
        return text


def _forget_in_child():
    """A forked child is not the session's process: it records nothing and writes no file
    (its parent's session goes on in the parent)."""
    global _session, _running, _paused, _lock
    _lock = threading.RLock()
    STATE.active = False
    STATE.objs = []
    _session, _running, _paused = None, False, False


os.register_at_fork(after_in_child=_forget_in_child)


@atexit.register
def _at_exit():
    """A session still running at exit is stopped and written (as MXNet does)."""
    with _lock:
        try:
            _stop("exit")
        except Exception:  # noqa: BLE001 - nothing to report to at exit
            if _session is not None:
                _session.close()
