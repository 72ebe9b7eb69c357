"""kperf.mstx - mstx markers and ranges from Python (include/kperf/mstx.h).

    import kperf.mstx as mstx
    mstx.mark("loaded")
    with mstx.range("step"):              # a range around a block
        ...
    rid = mstx.range_start("io")          # a range that may end on another thread
    mstx.range_end(rid)
    d = mstx.domain("db")                 # marks and ranges filed under a domain
    d.mark("query")
    with d.range("commit"):
        ...

Each call goes to libkperf-bpf's mstx functions, USDT probes that cost almost nothing while
nothing collects them (a range then gets id 0); kperf.mspti.MstxMonitor, `kperf-bpf
timeline` and KperfActivityOpen collect them. Messages are str (UTF-8; the first 255 bytes
are recorded), domain names too (63 bytes).
"""

import contextlib

from . import _lib

__all__ = ["mark", "range_start", "range_end", "range", "domain", "Domain"]


def _text(value, what):
    if not isinstance(value, str):
        raise TypeError(f"kperf.mstx: {what} must be a str, not {type(value).__name__}")
    return value.encode("utf-8", "surrogateescape")


class Domain:
    """A named domain (mstxDomainCreateA): the same name gives the same domain."""

    __slots__ = ("name", "_handle")

    def __init__(self, name):
        raw = _text(name, "a domain name")
        if not raw:
            raise ValueError("kperf.mstx: a domain name cannot be empty")
        self.name = name
        self._handle = _lib.fn("mstxDomainCreateA")(raw)
        if not self._handle:
            raise MemoryError("kperf.mstx: cannot create domain %r" % name)

    def mark(self, message):
        _lib.fn("mstxDomainMarkA")(self._handle, _text(message, "a message"), None)

    def range_start(self, message):
        """The range's id (0 when nothing collects, or after destroy())."""
        return _lib.fn("mstxDomainRangeStartA")(self._handle, _text(message, "a message"), None)

    def range_end(self, range_id):
        _lib.fn("mstxDomainRangeEnd")(self._handle, int(range_id))

    @contextlib.contextmanager
    def range(self, message):
        rid = self.range_start(message)
        try:
            yield rid
        finally:
            self.range_end(rid)

    def destroy(self):
        """Nothing is recorded in this domain until it is created again."""
        _lib.fn("mstxDomainDestroy")(self._handle)

    def __repr__(self):
        return f"<kperf.mstx.Domain {self.name!r}>"


def domain(name):
    """The domain called <name> (created on first use)."""
    return Domain(name)


def mark(message, domain=None):
    """An instantaneous marker, in <domain> (a Domain or a name) or the default one."""
    if domain is not None:
        _as_domain(domain).mark(message)
    else:
        _lib.fn("mstxMarkA")(_text(message, "a message"), None)


def range_start(message, domain=None):
    """Start a range; its id for range_end() (0 when nothing collects)."""
    if domain is not None:
        return _as_domain(domain).range_start(message)
    return _lib.fn("mstxRangeStartA")(_text(message, "a message"), None)


def range_end(range_id, domain=None):
    """End the range <range_id> (from any thread); an id of 0 does nothing."""
    if domain is not None:
        _as_domain(domain).range_end(range_id)
    else:
        _lib.fn("mstxRangeEnd")(int(range_id))


@contextlib.contextmanager
def range(message, domain=None):  # noqa: A001 - the name the API promises
    """with kperf.mstx.range("step"): ... - a range around the block (ended on exceptions
    too); the block gets the range's id."""
    rid = range_start(message, domain)
    try:
        yield rid
    finally:
        range_end(rid, domain)


def _as_domain(d):
    return d if isinstance(d, Domain) else Domain(d)
