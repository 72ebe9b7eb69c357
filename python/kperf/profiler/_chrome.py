"""kperf.profiler's Chrome trace-event file: the session's objects merged with the kernel's
timeline of the process (kperf.timeline: syscalls, CPU samples with their stacks, mstx marks
and ranges), on one clock (CLOCK_MONOTONIC: time.monotonic_ns() and the kernel's ns are the
same clock), written atomically so the file is always a whole, valid JSON document.

While a session runs with continuous_dump, the file is instead a stream in the JSON Array
Format, appended to every dump_period: "[" and one event per line, each after a comma, never
the closing bracket, which the format makes optional so that a process killed meanwhile
leaves a trace its readers load (recover() is that rule: strip what follows the last event,
close the array). Samples and off-CPU slices name their stack in "stack" (root first) there:
the array format has no stackFrames. The session's end rewrites the file whole, in the
object format.

Tasks, Frames and Events are complete events ("X") where they nest among the complete
events of their thread (the kernel's syscalls and ranges included), async begin/end pairs
("b"/"e") otherwise; Counters are "C" events, Markers "i" events with their scope.
"""

import json
import os
import tempfile

_UMASK = os.umask(0o022)
os.umask(_UMASK)


def us(ns):
    """ns as µs with three decimals (no ns lost)."""
    return round(ns / 1000, 3)


def kernel_doc(timeline):
    """The kernel's part so far: the Chrome trace kperf.timeline writes, parsed."""
    fd, tmp = tempfile.mkstemp(prefix="kperf-profiler-", suffix=".json")
    os.close(fd)
    try:
        timeline.write(tmp)
        with open(tmp, encoding="utf-8") as f:
            return json.load(f)
    finally:
        os.unlink(tmp)


def _object_events(objs, pid):
    """The trace events of the recorded objects: (spans, others)."""
    spans, others = [], []
    for ph, cat, name, ts, dur, tid, extra in objs:
        if ph == "X":
            spans.append({"name": name, "cat": cat, "ph": "X", "ts": us(ts), "dur": us(dur),
                          "pid": pid, "tid": tid, "args": {"kind": extra}})
        elif ph == "C":
            others.append({"name": name, "cat": cat, "ph": "C", "ts": us(ts), "pid": pid,
                           "tid": tid, "args": {name: extra}})
        else:
            others.append({"name": name, "cat": cat, "ph": "i", "ts": us(ts), "pid": pid,
                           "tid": tid, "s": extra, "args": {}})
    return spans, others


def _plan(spans, kernel_x):
    """The spans that cannot be complete events: those that overlap another complete event
    of their thread without nesting in it (or it in them). A set of id()s."""
    async_ids = set()
    by_tid = {}
    for e in spans:
        by_tid.setdefault(e["tid"], []).append((e, True))
    for e in kernel_x:
        if e["tid"] in by_tid:
            by_tid[e["tid"]].append((e, False))
    for items in by_tid.values():
        items.sort(key=lambda it: (it[0]["ts"], -it[0]["dur"]))
        while True:
            stack, clash = [], None
            for e, mine in items:
                if mine and id(e) in async_ids:
                    continue
                end = e["ts"] + e["dur"]
                while stack and stack[-1][0]["ts"] + stack[-1][0]["dur"] <= e["ts"]:
                    stack.pop()
                if stack and end > stack[-1][0]["ts"] + stack[-1][0]["dur"]:
                    top, top_mine = stack[-1]
                    clash = e if mine else top if top_mine else None
                    if clash is not None:
                        break
                stack.append((e, mine))
            if clash is None:
                break
            async_ids.add(id(clash))
    return async_ids


def merge(kdoc, objs, pid, thread_names, exclude_tids, meta):
    """One Chrome trace document of the kernel's part <kdoc> (may be None) and the objects
    <objs>; the events of the threads in <exclude_tids> (the profiler's own) left out."""
    kev = []
    frames, other = {}, {}
    if kdoc:
        kev = [e for e in kdoc.get("traceEvents", []) if e.get("tid") not in exclude_tids]
        frames = kdoc.get("stackFrames", {})
        other = dict(kdoc.get("otherData", {}))
    spans, others = _object_events(objs, pid)
    async_ids = _plan(spans, [e for e in kev if e["ph"] == "X"])
    events = [e for e in kev if e["ph"] != "M"] + others
    n = 0
    for e in spans:
        if id(e) not in async_ids:
            events.append(e)
            continue
        n += 1
        key = {"local": "0x%x" % n}
        events.append({"name": e["name"], "cat": e["cat"], "ph": "b", "ts": e["ts"],
                       "pid": pid, "tid": e["tid"], "id2": key, "args": e["args"]})
        events.append({"name": e["name"], "cat": e["cat"], "ph": "e",
                       "ts": round(e["ts"] + e["dur"], 3), "pid": pid, "tid": e["tid"],
                       "id2": key})
    # time order; at one time an enclosing event before what it encloses, a begin before
    # an end
    events.sort(key=lambda e: (e["ts"], -e.get("dur", 0), e["ph"] == "e"))
    names = [e for e in kev if e["ph"] == "M"]
    if not any(e["name"] == "process_name" and e["pid"] == pid for e in names):
        names.append({"name": "process_name", "ph": "M", "pid": pid, "tid": pid,
                      "args": {"name": thread_names.get(pid, "python")}})
    seen = {e["tid"] for e in names if e["name"] == "thread_name"}
    for tid in sorted({e["tid"] for e in events if e["pid"] == pid} - seen):
        if tid in thread_names:
            names.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                          "args": {"name": thread_names[tid]}})
    other.update(meta)
    other.setdefault("producer", "kperf-bpf")
    other["clock"] = "CLOCK_MONOTONIC"
    return {"traceEvents": names + events, "stackFrames": frames, "displayTimeUnit": "ns",
            "otherData": other}


def write_atomic(path, doc):
    """Write <doc> to <path> through a temporary file of the same directory renamed into
    place: a reader (or a process killed meanwhile) sees the old file or the new one, each
    whole. OSError when the directory cannot be written."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # as open() would have made it
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def stream_start(path, pid, name):
    """A new stream at <path>: the opening bracket and the process's name (its key, as
    stream_events makes them)."""
    first = {"name": "process_name", "ph": "M", "pid": pid, "tid": pid, "args": {"name": name}}
    key = json.dumps(first, sort_keys=True, separators=(",", ":"))
    with open(path, "w", encoding="utf-8") as f:
        f.write("[" + key + "\n")
    return key


def stream_events(doc, written):
    """The events of <doc> (merge's document) not yet in the stream: <written> holds the keys
    of those that are, and gets the new ones. A range or slice still unfinished waits for its
    end (the final file has it either way); a stack frame id becomes the "stack" itself."""
    frames = doc.get("stackFrames", {})
    out = []
    for e in doc["traceEvents"]:
        if (e.get("args") or {}).get("unfinished"):
            continue
        if "sf" in e:
            e = dict(e)
            sf, stack = e.pop("sf"), []
            while sf is not None and str(sf) in frames and len(stack) < 512:
                stack.append(frames[str(sf)]["name"])
                sf = frames[str(sf)].get("parent")
            e["stack"] = stack[::-1]
        key = json.dumps(e, sort_keys=True, separators=(",", ":"))
        if key not in written:
            written.add(key)
            out.append(key)
    return out


def stream_append(path, lines):
    """Append the events (JSON texts) to the stream at <path>, in one write."""
    if not lines:
        return
    data = "".join("," + ln + "\n" for ln in lines).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def recover(path):
    """The trace file at <path> parsed, by the trace event format's rule for the JSON Array
    Format: the closing bracket may be missing (a process killed while writing), so what
    follows the last complete event is cut and the array closed. An object-format file is
    parsed as it is."""
    with open(path, encoding="utf-8") as f:
        t = f.read().rstrip()
    if t.startswith("[") and not t.endswith("]"):
        t = t[:t.rfind("}") + 1] if "}" in t else "["
        t = t.rstrip().rstrip(",") + "]"
    return json.loads(t)

