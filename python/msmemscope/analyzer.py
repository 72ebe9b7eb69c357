"""msMemScope's analyzer classes over a memscope recording: LeaksAnalyzer/LeaksConfig (leaks
between mstx marks) and InefficientAnalyzer/InefficientConfig (memory allocated too early,
freed too late, left idle). Each analyze() prints a readable report, as msMemScope's do, and
returns the findings as objects (kperf-bpf's addition).

Blocks are told apart by (process, allocation id): the recorder gives each allocation an id,
and each FREE and ACCESS row names the block it concerns.
"""

import bisect
import sys

from ._recording import MemScopeError, format_attr, load, parse_attr, write_attrs

INEFFICIENT_TYPES = ("early_allocation", "late_deallocation", "temporary_idleness")

__all__ = ["LeaksConfig", "LeaksAnalyzer", "InefficientConfig", "InefficientAnalyzer", "Leak",
           "LeakReport", "Inefficiency", "MemScopeError", "INEFFICIENT_TYPES"]


def _check_int(name, value, minimum=0):
    if isinstance(value, bool) or not isinstance(value, int):
        raise MemScopeError(f"{name} must be an int, not {type(value).__name__} {value!r}")
    if value < minimum:
        raise MemScopeError(f"{name} must be at least {minimum}, not {value}")


class LeaksConfig:
    """Parameters of a leak analysis: the recording, the text of the mstx marks that bound the
    analysis, and the index (0 first) of the mark that starts it."""

    def __init__(self, input_path, mstx_info, start_index=0):
        self.input_path = input_path
        self.mstx_info = mstx_info
        self.start_index = start_index

    def check(self):
        if not isinstance(self.mstx_info, str) or not self.mstx_info:
            raise MemScopeError(f"mstx_info must be the text of a mark, not {self.mstx_info!r}")
        _check_int("start_index", self.start_index)

    def __repr__(self):
        return (f"LeaksConfig(input_path={self.input_path!r}, mstx_info={self.mstx_info!r}, "
                f"start_index={self.start_index!r})")


class Leak:
    """One block left allocated: where and when it was allocated, and the bytes still held
    (`estimated_bytes`: what it stands for in a sampled recording, else its size)."""

    __slots__ = ("ptr", "size", "estimated_bytes", "allocation_id", "timestamp", "pid", "tid",
                 "func", "leaf", "stack", "row_id")

    def __repr__(self):
        return (f"Leak(ptr={self.ptr:#x}, size={self.size}, leaf={self.leaf!r}, "
                f"func={self.func!r}, allocation_id={self.allocation_id})")


class LeakReport:
    """The leaks of one analysis: `leaks` (in allocation order), `count`, `total_bytes`,
    `estimated_bytes` (rescaled in a sampled recording), and the marks that bounded it:
    `start`, `end` and `deadline` timestamps (`deadline` None: the end of the recording)."""

    def __init__(self, leaks, start, end, deadline, sampled):
        self.leaks = leaks
        self.start, self.end, self.deadline = start, end, deadline
        self.sampled = sampled

    @property
    def count(self):
        return len(self.leaks)

    @property
    def total_bytes(self):
        return sum(l.size for l in self.leaks)

    @property
    def estimated_bytes(self):
        return sum(l.estimated_bytes for l in self.leaks)

    def __iter__(self):
        return iter(self.leaks)

    def __len__(self):
        return len(self.leaks)

    def __repr__(self):
        return f"LeakReport(count={self.count}, total_bytes={self.total_bytes})"


def _blocks(rows):
    """(pid, allocation_id) -> the MALLOC row, the FREE rows, the ACCESS rows"""
    blocks = {}
    for r in rows:
        aid = r.attr.get("allocation_id")
        if not isinstance(aid, int) or aid <= 0:
            continue
        key = (r.pid, aid)
        if r.event == "MALLOC":
            blocks[key] = [r, [], []]
        elif key in blocks and r.event == "FREE":
            blocks[key][1].append(r)
        elif key in blocks and r.event == "ACCESS":
            blocks[key][2].append(r)
    return blocks


def _marks(rows, text):
    return [r for r in rows if r.event == "MSTX" and r.type == "Mark" and r.name == text]


def _size(r):
    size = r.attr.get("size")
    return size if isinstance(size, int) else 0


class LeaksAnalyzer:
    """Memory allocated between the start_index-th mark whose text is mstx_info and the next
    such mark, and not freed before the mark after that (the end of the recording when there
    is none), in the process of those marks."""

    def analyze(self, config, out=sys.stdout):
        if not isinstance(config, LeaksConfig):
            raise MemScopeError(f"LeaksAnalyzer.analyze takes a LeaksConfig, not {config!r}")
        config.check()
        rows = load(config.input_path)
        marks = _marks(rows, config.mstx_info)
        if not marks:
            texts = sorted({r.name for r in rows if r.event == "MSTX" and r.type == "Mark"})
            raise MemScopeError(
                f"no mark {config.mstx_info!r} in {config.input_path} (its marks: "
                f"{', '.join(repr(t) for t in texts) if texts else 'none'})")
        i = config.start_index
        if i + 1 >= len(marks):
            raise MemScopeError(
                f"start_index {i} is out of range: {config.input_path} has {len(marks)} "
                f"mark{'s' if len(marks) != 1 else ''} {config.mstx_info!r}, and a leak "
                f"analysis needs the start_index-th and the next one (start_index at most "
                f"{len(marks) - 2})" if len(marks) >= 2 else
                f"start_index {i} is out of range: {config.input_path} has only one mark "
                f"{config.mstx_info!r}; a leak analysis needs two (and a third as the deadline "
                f"for frees)")
        start, end = marks[i], marks[i + 1]
        deadline = marks[i + 2].ts if i + 2 < len(marks) else None
        pid = start.pid
        sampled = any("weight" in r.attr for r in rows if r.event == "MALLOC")
        leaks = []
        for (bpid, aid), (m, frees, _) in _blocks(rows).items():
            if bpid != pid or not (start.ts < m.ts < end.ts):
                continue
            size = _size(m)
            before = [f for f in frees if deadline is None or f.ts < deadline]
            freed = sum(_size(f) if isinstance(f.attr.get("size"), int) else size for f in before)
            left = max(size - freed, 0)
            if before and left == 0:
                continue
            lk = Leak()
            lk.ptr, lk.size, lk.allocation_id = m.ptr or 0, left, aid
            weight = m.attr.get("weight")
            lk.estimated_bytes = (round(weight * left / size) if isinstance(weight, (int, float))
                                  and size else left)
            lk.timestamp, lk.pid, lk.tid = m.ts, m.pid, m.tid
            lk.func, lk.leaf, lk.stack, lk.row_id = m.name, m.leaf, m.c_stack, m.id
            leaks.append(lk)
        leaks.sort(key=lambda l: (l.timestamp, l.allocation_id))
        report = LeakReport(leaks, start.ts, end.ts, deadline, sampled)
        if out is not None:
            _print_leaks(report, config, out)
        return report


def _print_leaks(rep, config, out):
    until = (f"before mark #{config.start_index + 2}" if rep.deadline is not None
             else "by the end of the recording")
    print(f"Leaks of process between marks {config.mstx_info!r} #{config.start_index} and "
          f"#{config.start_index + 1}, not freed {until}: {rep.count} block"
          f"{'s' if rep.count != 1 else ''}, {rep.total_bytes} bytes"
          + (f" (about {rep.estimated_bytes} bytes, rescaled from samples)" if rep.sampled
             else ""), file=out)
    if rep.leaks:
        print(f"  {'size':>10}  {'ptr':>18}  {'function':<15} {'thread':>7}  allocated in",
              file=out)
        for l in rep.leaks:
            print(f"  {l.size:>10}  {l.ptr:#18x}  {l.func:<15} {l.tid:>7}  {l.leaf or '?'}",
                  file=out)
    else:
        print("  no leak", file=out)


class InefficientConfig:
    """Parameters of an inefficiency analysis: the recording, the smallest block size looked
    at, the kinds asked for (None: all three), and how many allocator calls of the process
    between two uses make a block temporarily idle."""

    def __init__(self, input_path, mem_size=0, inefficient_type=None, idle_threshold=3000):
        self.input_path = input_path
        self.mem_size = mem_size
        self.inefficient_type = inefficient_type
        self.idle_threshold = idle_threshold

    def types(self):
        t = self.inefficient_type
        if t is None:
            return list(INEFFICIENT_TYPES)
        if isinstance(t, str):
            t = [t]
        if not isinstance(t, (list, tuple)) or not t:
            raise MemScopeError(f"inefficient_type must be a list of {', '.join(INEFFICIENT_TYPES)}"
                                f", not {self.inefficient_type!r}")
        for x in t:
            if x not in INEFFICIENT_TYPES:
                raise MemScopeError(f"unknown inefficient_type {x!r}: the types are "
                                    f"{', '.join(INEFFICIENT_TYPES)}")
        return list(dict.fromkeys(t))

    def check(self):
        _check_int("mem_size", self.mem_size)
        _check_int("idle_threshold", self.idle_threshold, 1)
        return self.types()

    def __repr__(self):
        return (f"InefficientConfig(input_path={self.input_path!r}, mem_size={self.mem_size!r}, "
                f"inefficient_type={self.inefficient_type!r}, "
                f"idle_threshold={self.idle_threshold!r})")


class Inefficiency:
    """One finding: the block (ptr, size, allocation_id, pid, leaf of its allocation stack),
    its kind, and `calls`: the allocator calls of the process that show it (frees before the
    first use, allocations after the last use, calls in the longest idle gap)."""

    __slots__ = ("type", "ptr", "size", "allocation_id", "pid", "tid", "func", "leaf",
                 "timestamp", "calls", "row_id")

    def __repr__(self):
        return (f"Inefficiency(type={self.type!r}, ptr={self.ptr:#x}, size={self.size}, "
                f"leaf={self.leaf!r}, calls={self.calls})")


class InefficientAnalyzer:
    """Blocks of at least mem_size bytes that the process uses (ACCESS rows: see the README
    for what counts as use), judged against the process's allocator calls (its MALLOC and
    FREE rows, in time order):
      early_allocation    another block was freed between its allocation and its first use;
      late_deallocation   another block was allocated between its last use and its free;
      temporary_idleness  more than idle_threshold allocator calls between two of its uses.
    Findings are written back into the file: the block's MALLOC row gets
    `inefficient:<kinds>` in its Attr (added to what an earlier analysis wrote)."""

    def analyze(self, config, out=sys.stdout):
        if not isinstance(config, InefficientConfig):
            raise MemScopeError(
                f"InefficientAnalyzer.analyze takes an InefficientConfig, not {config!r}")
        types = config.check()
        rows = load(config.input_path)
        if out is not None:
            print(f"Looking for {', '.join(types)} in {config.input_path} (blocks of at least "
                  f"{config.mem_size} bytes, idle threshold {config.idle_threshold} calls)",
                  file=out)
        # each process's allocator calls in time order, with running counts of each kind
        procs = {}
        for r in rows:
            if r.event in ("MALLOC", "FREE"):
                p = procs.setdefault(r.pid, ([], {"MALLOC": [0], "FREE": [0]}))
                p[0].append(r.ts)
                for ev, counts in p[1].items():
                    counts.append(counts[-1] + (r.event == ev))

        def count(pid, t0, t1, event, own):
            """allocator calls (<event>, or any when None) of <pid> strictly between t0 and
            t1, the block's own rows <own> left out"""
            ts, counts = procs.get(pid, ([], {"MALLOC": [0], "FREE": [0]}))
            lo, hi = bisect.bisect_right(ts, t0), bisect.bisect_left(ts, t1)
            if hi <= lo:
                return 0
            n = sum(counts[e][hi] - counts[e][lo] for e in ([event] if event else counts))
            return n - sum(1 for r in own if t0 < r.ts < t1 and (event is None or r.event == event))

        found = []
        for (pid, aid), (m, frees, uses) in _blocks(rows).items():
            size = _size(m)
            if size < config.mem_size or not uses:
                continue
            own = [m] + frees
            kinds = []
            if "early_allocation" in types:
                n = count(pid, m.ts, uses[0].ts, "FREE", own)
                if n:
                    kinds.append(("early_allocation", n))
            if "late_deallocation" in types and frees:
                n = count(pid, uses[-1].ts, frees[0].ts, "MALLOC", own)
                if n:
                    kinds.append(("late_deallocation", n))
            if "temporary_idleness" in types and len(uses) > 1:
                gap = max(count(pid, u0.ts, u1.ts, None, own) for u0, u1 in zip(uses, uses[1:]))
                if gap > config.idle_threshold:
                    kinds.append(("temporary_idleness", gap))
            for kind, n in kinds:
                f = Inefficiency()
                f.type, f.ptr, f.size, f.allocation_id = kind, m.ptr or 0, size, aid
                f.pid, f.tid, f.func, f.leaf = pid, m.tid, m.name, m.leaf
                f.timestamp, f.calls, f.row_id = m.ts, n, m.id
                found.append(f)
        found.sort(key=lambda f: (f.timestamp, INEFFICIENT_TYPES.index(f.type)))
        _write_back(config.input_path, rows, found)
        if out is not None:
            _print_ineff(found, out)
        return found


def _write_back(path, rows, found):
    by_row = {}
    for f in found:
        by_row.setdefault(f.row_id, []).append(f.type)
    changes = {}
    for r in rows:
        if r.id not in by_row:
            continue
        attr = parse_attr(r.attr_text)
        have = [k for k in str(attr.get("inefficient", "")).split("|") if k]
        for k in by_row[r.id]:
            if k not in have:
                have.append(k)
        attr["inefficient"] = "|".join(have)
        changes[r.id] = format_attr(attr)
    write_attrs(path, changes)


def _print_ineff(found, out):
    print(f"{len(found)} inefficient block{'s' if len(found) != 1 else ''} found, written into "
          f"the file", file=out)
    if found:
        print(f"  {'type':<19} {'size':>10}  {'ptr':>18}  {'calls':>6}  allocated in", file=out)
        for f in found:
            print(f"  {f.type:<19} {f.size:>10}  {f.ptr:#18x}  {f.calls:>6}  {f.leaf or '?'}",
                  file=out)
