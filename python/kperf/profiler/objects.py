"""kperf.profiler's profiling objects, with MXNet's semantics: Domain, Task, Frame, Event,
Counter and Marker. What they record goes to the running session (kperf.profiler._session):
Task, Frame and Event as complete events ("X", the domain as category; Event's category is
"event"), Counter values as "C" events, Marker as instant events ("i").

Nothing is recorded outside a running session or while it is paused: a Task started there
records nothing when it stops, and a Task is recorded only when it starts and stops in the
same running stretch of one session (a pause in between drops it). Start and stop cost a
clock read and a list append; stopping a Task that was not started does nothing.
"""

import os
import threading

from ._session import STATE, THREAD_NAMES, now
from .errors import ProfilerError

__all__ = ["Domain", "Task", "Frame", "Event", "Counter", "Marker"]

_local = threading.local()


def _new_local():
    global _local
    _local = threading.local()  # a forked child's threads have ids of their own


os.register_at_fork(after_in_child=_new_local)


def _tid():
    """This thread's kernel id, the timeline's tid (threading.get_native_id() makes a
    syscall every time: it would be on the trace, and cost)."""
    try:
        return _local.tid
    except AttributeError:
        _local.tid = threading.get_native_id()
        THREAD_NAMES[_local.tid] = threading.current_thread().name  # it may end before a dump
        return _local.tid


class Domain:
    """A named group of Tasks, Frames, Counters and Markers (their category)."""

    __slots__ = ("name",)

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise ProfilerError(f"Domain: the name must be a non-empty str, not {name!r}")
        self.name = name

    def new_task(self, name):
        return Task(self, name)

    def new_frame(self, name):
        return Frame(self, name)

    def new_counter(self, name, value=None):
        return Counter(self, name, value)

    def new_marker(self, name):
        return Marker(self, name)

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"<kperf.profiler.Domain {self.name!r}>"


def _domain(domain, what):
    if not isinstance(domain, Domain):
        raise ProfilerError(f"{what}: the domain must be a kperf.profiler.Domain, not "
                            f"{type(domain).__name__}")
    return domain


def _name(name, what):
    if not isinstance(name, str) or not name:
        raise ProfilerError(f"{what}: the name must be a non-empty str, not {name!r}")
    return name


class _Span:
    """What Task, Frame and Event share: start()/stop(), and use as a context manager."""

    __slots__ = ("name", "_cat", "_t0", "_run")

    def start(self):
        s = STATE
        if s.active:
            self._run = s.run
            self._t0 = now()
        else:
            self._t0 = None

    def stop(self):
        t0 = self._t0
        if t0 is None:
            return
        self._t0 = None
        t1 = now()
        s = STATE
        if s.active and s.run == self._run:
            s.span(self._cat, self.name, t0, t1, _tid(), self._kind)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def __str__(self):
        return self.name


class Task(_Span):
    """A logical unit of work of a domain (MXNet's Task)."""

    __slots__ = ("domain",)
    _kind = "Task"

    def __init__(self, domain, name):
        self.domain = _domain(domain, "Task")
        self.name = _name(name, "Task")
        self._cat = self.domain.name
        self._t0 = None
        self._run = 0

    def __repr__(self):
        return f"<kperf.profiler.Task {self.domain.name}:{self.name}>"


class Frame(_Span):
    """A region of a domain that repeats (an iteration, a batch: MXNet's Frame)."""

    __slots__ = ("domain",)
    _kind = "Frame"

    def __init__(self, domain, name):
        self.domain = _domain(domain, "Frame")
        self.name = _name(name, "Frame")
        self._cat = self.domain.name
        self._t0 = None
        self._run = 0

    def __repr__(self):
        return f"<kperf.profiler.Frame {self.domain.name}:{self.name}>"


class Event(_Span):
    """A named span of no domain (its category is "event": MXNet's Event)."""

    __slots__ = ()
    _kind = "Event"

    def __init__(self, name):
        self.name = _name(name, "Event")
        self._cat = "event"
        self._t0 = None
        self._run = 0

    def __repr__(self):
        return f"<kperf.profiler.Event {self.name}>"


def _number(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ProfilerError(f"Counter: {what} must be a number, not {v!r}")
    return v


class Counter:
    """A value of a domain that changes over time: every change while a session runs is a
    "C" event with the new value (MXNet's Counter). The value is kept whatever the session
    does, so it is right when the next session starts."""

    __slots__ = ("domain", "name", "value")

    def __init__(self, domain, name, value=None):
        self.domain = _domain(domain, "Counter")
        self.name = _name(name, "Counter")
        self.value = 0
        if value is not None:
            self.set_value(value)

    def _record(self):
        s = STATE
        if s.active:
            s.counter(self.domain.name, self.name, self.value, now(), _tid())

    def set_value(self, value):
        self.value = _number(value, "the value")
        self._record()

    def increment(self, delta=1):
        self.value += _number(delta, "the delta")
        self._record()

    def decrement(self, delta=1):
        self.value -= _number(delta, "the delta")
        self._record()

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return f"{self.name}={self.value}"

    def __repr__(self):
        return f"<kperf.profiler.Counter {self.domain.name}:{self.name}={self.value}>"


# MXNet's scopes, and the trace-event scope each becomes
SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


class Marker:
    """An instant of a domain (MXNet's Marker): mark(scope) puts it on the timeline, across
    every process ('global'), this process ('process') or its thread ('thread', 'task',
    'marker')."""

    __slots__ = ("domain", "name")

    def __init__(self, domain, name):
        self.domain = _domain(domain, "Marker")
        self.name = _name(name, "Marker")

    def mark(self, scope="process"):
        s = SCOPES.get(scope)
        if s is None:
            raise ProfilerError(f"Marker.mark: unknown scope {scope!r} (one of: "
                                f"{', '.join(SCOPES)})")
        st = STATE
        if st.active:
            st.mark(self.domain.name, self.name, s, now(), _tid())

    def __repr__(self):
        return f"<kperf.profiler.Marker {self.domain.name}:{self.name}>"
