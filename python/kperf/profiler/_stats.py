"""kperf.profiler's aggregate statistics (dumps()): MXNet's "Profile Statistics" table, per
category (a domain, "event", "syscall"): Name, Total Count, Time (ms), Min/Max/Avg Time (ms),
plus P50 and P99 (nearest rank); the Counters (last, min and max value) and the Markers
(how many). The same as JSON with format='json'.

Spans (Tasks, Frames, Events) are added as they stop; the syscalls of a session when it
stops (or, for the session running, when dumps() asks). reset clears them all.
"""

import json
import math

SORT_KEYS = ("total", "avg", "min", "max", "count")
FORMATS = ("table", "json")
TIME_COLS = ("Total Count", "Time (ms)", "Min Time (ms)", "Max Time (ms)", "Avg Time (ms)",
             "P50 (ms)", "P99 (ms)")


class Stats:
    def __init__(self):
        self.spans = {}  # (category, name) -> [ns, ...]
        self.counters = {}  # (domain, name) -> [count, last, min, max]
        self.marks = {}  # (domain, name) -> count
        self.syscalls = {}  # name -> [[ns, ...], errors]

    def span(self, cat, name, dur):
        d = self.spans.get((cat, name))
        if d is None:
            self.spans[(cat, name)] = [dur]
        else:
            d.append(dur)

    def counter(self, cat, name, value):
        c = self.counters.get((cat, name))
        if c is None:
            self.counters[(cat, name)] = [1, value, value, value]
        else:
            c[0] += 1
            c[1] = value
            c[2] = min(c[2], value)
            c[3] = max(c[3], value)

    def mark(self, cat, name):
        self.marks[(cat, name)] = self.marks.get((cat, name), 0) + 1

    def syscall(self, name, dur, ret):
        s = self.syscalls.setdefault(name, [[], 0])
        s[0].append(dur)
        s[1] += ret < 0

    def add_syscalls(self, kdoc, exclude_tids, since_us):
        """The syscalls of a kernel trace, from <since_us> on (a reset)."""
        for e in (kdoc or {}).get("traceEvents", ()):
            if e.get("cat") == "syscall" and e["ph"] == "X" and e["ts"] >= since_us and \
                    e["tid"] not in exclude_tids:
                self.syscall(e["name"], round(e["dur"] * 1000), e.get("args", {}).get("ret", 0))

    def copy(self):
        c = Stats()
        c.spans = {k: list(v) for k, v in self.spans.items()}
        c.counters = {k: list(v) for k, v in self.counters.items()}
        c.marks = dict(self.marks)
        c.syscalls = {k: [list(v[0]), v[1]] for k, v in self.syscalls.items()}
        return c

    def empty(self):
        return not (self.spans or self.counters or self.marks or self.syscalls)


def _row(durs):
    """The time columns of a list of ns."""
    s = sorted(durs)
    n = len(s)
    ms = 1e6

    def rank(p):
        return s[max(0, math.ceil(p / 100 * n) - 1)] / ms

    total = sum(s) / ms
    return dict(zip(TIME_COLS, (n, total, s[0] / ms, s[-1] / ms, total / n, rank(50),
                                rank(99))))


_SORT_COL = {"total": "Time (ms)", "avg": "Avg Time (ms)", "min": "Min Time (ms)",
             "max": "Max Time (ms)", "count": "Total Count"}


def _sorted(rows, sort_by, ascending):
    col = _SORT_COL[sort_by]
    return sorted(rows.items(), key=lambda kv: (kv[1][col], kv[0]), reverse=not ascending)


def aggregate(st, sort_by, ascending):
    """The statistics as nested dicts, rows in the order asked."""
    cats = {}
    for (cat, name), durs in st.spans.items():
        cats.setdefault(cat, {})[name] = _row(durs)
    out = {"Unit": {"Time": "ms"}, "Time": {}, "Syscalls": {}, "Counters": {}, "Markers": {}}
    for cat in sorted(cats):
        out["Time"][cat] = dict(_sorted(cats[cat], sort_by, ascending))
    sysrows = {}
    for name, (durs, errors) in st.syscalls.items():
        r = _row(durs)
        r["Errors"] = errors
        sysrows[name] = r
    out["Syscalls"] = dict(_sorted(sysrows, sort_by, ascending))
    for (cat, name), (n, last, lo, hi) in sorted(st.counters.items()):
        out["Counters"].setdefault(cat, {})[name] = {"Total Count": n, "Value": last,
                                                     "Min Value": lo, "Max Value": hi}
    for (cat, name), n in sorted(st.marks.items()):
        out["Markers"].setdefault(cat, {})[name] = {"Total Count": n}
    return out


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def _table(title, cols, rows):
    width = max([28] + [len(n) + 2 for n, _ in rows])
    lines = [title, "=" * 17]
    lines.append("Name".ljust(width) + "".join(c.rjust(max(len(c) + 4, 14)) for c in cols))
    lines.append("----".ljust(width) + "".join(("-" * len(c)).rjust(max(len(c) + 4, 14))
                                               for c in cols))
    for name, r in rows:
        lines.append(name.ljust(width) + "".join(_fmt(r[c]).rjust(max(len(c) + 4, 14))
                                                 for c in cols))
    lines.append("")
    return lines


def render(agg, fmt):
    if fmt == "json":
        return json.dumps(agg, indent=4)
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    for cat, rows in agg["Time"].items():
        lines += _table(cat, TIME_COLS, list(rows.items()))
    if agg["Syscalls"]:
        lines += _table("Syscalls (this process, as the kernel saw them)", TIME_COLS +
                        ("Errors",), list(agg["Syscalls"].items()))
    for cat, rows in agg["Counters"].items():
        lines += _table(f"{cat} (counters)", ("Total Count", "Value", "Min Value",
                                              "Max Value"), list(rows.items()))
    for cat, rows in agg["Markers"].items():
        lines += _table(f"{cat} (markers)", ("Total Count",), list(rows.items()))
    return "\n".join(lines) + "\n"
