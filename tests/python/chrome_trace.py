"""A strict reader of Chrome trace-event JSON files, for the timeline tests.

check(path) parses the file as strict JSON (no duplicate keys, no NaN) and checks every
event against the trace-event format as kperf-bpf writes it: the phases it uses (M, X, i, P,
b, e; C for kperf.profiler's counters; "sf" on samples and off-CPU slices) and the fields each requires, nothing unknown, async
begin/end pairs matched, complete events of one thread nested, stack frames that exist and form a tree, and timestamps in
non-decreasing order through the file (one clock). It returns the parsed document; any
breach fails with the event at fault.
"""

import json
import math

PHASES = {
    "M": {"name", "ph", "pid", "tid", "args"},
    "X": {"name", "cat", "ph", "ts", "dur", "pid", "tid", "sf", "stack", "args"},
    "i": {"name", "cat", "ph", "ts", "pid", "tid", "s", "args"},
    "P": {"name", "cat", "ph", "ts", "pid", "tid", "sf", "stack", "args"},
    "b": {"name", "cat", "ph", "ts", "pid", "tid", "id2", "args"},
    "e": {"name", "cat", "ph", "ts", "pid", "tid", "id2"},
    "C": {"name", "cat", "ph", "ts", "pid", "tid", "args"},
}
REQUIRED = {
    "M": {"name", "ph", "pid", "tid", "args"},
    "X": {"name", "cat", "ph", "ts", "dur", "pid", "tid"},
    "i": {"name", "cat", "ph", "ts", "pid", "tid", "s"},
    "P": {"name", "cat", "ph", "ts", "pid", "tid"},
    "b": {"name", "cat", "ph", "ts", "pid", "tid", "id2"},
    "e": {"name", "cat", "ph", "ts", "pid", "tid", "id2"},
    "C": {"name", "ph", "ts", "pid", "args"},
}


def _no_dup(pairs):
    d = {}
    for k, v in pairs:
        assert k not in d, f"duplicate key {k!r}"
        d[k] = v
    return d


def _bad_constant(c):
    raise AssertionError(f"{c} is not JSON")


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _us_ns(v):
    """µs with at most three decimals (ns precision), as an exact ns count."""
    s = repr(v)
    assert "e" not in s.lower(), f"timestamp {v} in exponent form"
    whole, _, frac = s.partition(".")
    assert len(frac) <= 3 or frac.rstrip("0")[3:] == "", f"timestamp {v}: more than ns"
    return int(whole) * 1000 + int((frac + "000")[:3] or 0)


def recover_array(path):
    """A JSON Array Format file read as the trace event format allows it to end: without its
    closing bracket (the writer killed), a trailing comma and a cut event dropped. The events,
    in time order (the format does not require it of an array), checked as check() does."""
    with open(path, encoding="utf-8") as f:
        text = f.read().rstrip()
    assert text.startswith("["), "not a JSON Array Format file"
    if not text.endswith("]"):
        text = text[:text.rfind("}") + 1].rstrip().rstrip(",") + "]"
    evs = json.loads(text, object_pairs_hook=_no_dup, parse_constant=_bad_constant)
    assert isinstance(evs, list)
    evs.sort(key=lambda e: (e["ph"] != "M", e.get("ts", 0), -e.get("dur", 0)))
    return _check_events({"traceEvents": evs}, {})


def check(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    doc = json.loads(text, object_pairs_hook=_no_dup, parse_constant=_bad_constant)
    assert isinstance(doc, dict), "the top level is not an object"
    assert set(doc) <= {"traceEvents", "stackFrames", "displayTimeUnit", "otherData"}, set(doc)
    assert doc.get("displayTimeUnit") in (None, "ms", "ns")
    frames = doc.get("stackFrames", {})
    assert isinstance(frames, dict)
    for key, fr in frames.items():
        assert key.isdigit() and int(key) > 0, f"stack frame id {key!r}"
        assert set(fr) <= {"name", "category", "parent"} and "name" in fr, fr
        assert isinstance(fr["name"], str) and fr["name"], fr
        if "parent" in fr:
            assert str(fr["parent"]) in frames, f"frame {key}: parent {fr['parent']} missing"
            assert int(fr["parent"]) < int(key), f"frame {key}: parent after it"
    return _check_events(doc, frames)


def _check_events(doc, frames):
    events = doc["traceEvents"]
    assert isinstance(events, list)
    last_ts = None
    open_async = {}
    stacks = {}
    for i, e in enumerate(events):
        where = f"event {i} {e}"
        assert isinstance(e, dict), where
        ph = e.get("ph")
        assert ph in PHASES, f"{where}: phase {ph!r}"
        assert set(e) <= PHASES[ph], f"{where}: unknown {set(e) - PHASES[ph]}"
        assert REQUIRED[ph] <= set(e), f"{where}: missing {REQUIRED[ph] - set(e)}"
        assert isinstance(e["name"], str) and isinstance(e["pid"], int), where
        assert isinstance(e["tid"], int) and e["pid"] >= 0 and e["tid"] >= 0, where
        if "args" in e:
            assert isinstance(e["args"], dict), where
        if ph == "M":
            assert e["name"] in ("process_name", "thread_name"), where
            assert isinstance(e["args"].get("name"), str), where
            continue
        assert isinstance(e["cat"], str), where
        assert _num(e["ts"]) and e["ts"] >= 0, where
        ts = _us_ns(e["ts"])
        assert last_ts is None or ts >= last_ts, f"{where}: time goes back"
        last_ts = ts
        if ph == "X":
            assert _num(e["dur"]) and e["dur"] >= 0, where
            end = ts + _us_ns(e["dur"])
            st = stacks.setdefault((e["pid"], e["tid"]), [])
            while st and st[-1] <= ts:
                st.pop()
            assert not st or end <= st[-1], f"{where}: overlaps an enclosing event"
            st.append(end)
            if e["cat"] == "syscall":
                assert isinstance(e["args"]["ret"], int), where
            if e["cat"] == "off-cpu":
                assert e["name"] in ("blocked", "preempted"), where
                assert e["args"]["reason"] == e["name"], where
            if "sf" in e:
                assert str(e["sf"]) in frames, f"{where}: stack frame missing"
            if "stack" in e:
                assert all(isinstance(f, str) for f in e["stack"]), where
        elif ph == "i":
            assert e["s"] in ("t", "p", "g"), where
        elif ph == "C":
            assert e["args"] and all(_num(v) for v in e["args"].values()), where
        elif ph == "P":
            if "sf" in e:
                assert str(e["sf"]) in frames, f"{where}: stack frame missing"
            if "stack" in e:
                assert all(isinstance(f, str) for f in e["stack"]), where
        else:
            assert set(e["id2"]) == {"local"} and isinstance(e["id2"]["local"], str), where
            key = (e["pid"], e["cat"], e["name"], e["id2"]["local"])
            if ph == "b":
                assert key not in open_async, f"{where}: begun twice"
                open_async[key] = ts
            else:
                assert key in open_async, f"{where}: ends what never began"
                assert open_async.pop(key) <= ts, where
    assert not open_async, f"async events never ended: {list(open_async)}"
    return doc


def events(doc, ph=None, cat=None, name=None, pid=None):
    """The events of <doc> that match."""
    return [e for e in doc["traceEvents"]
            if (ph is None or e["ph"] == ph) and (cat is None or e.get("cat") == cat)
            and (name is None or e["name"] == name) and (pid is None or e["pid"] == pid)]


def ns(v):
    return _us_ns(v)
