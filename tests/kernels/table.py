#!/usr/bin/env python3
"""table.py OUTROOT [--readme README.md] [--select "..."] [--set core|full] - the table kernel x
capability of `make test-kernels`, from what each guest wrote into OUTROOT/NAME-ARCH
(tests/kernels/guest.sh). `table.py --failed FILE` prints the tests that failed in a criterion
JSON (a --filter glob) or a pytest XML (node ids): what a guest of the core set runs again.

A column is a group of criterion suites (COLUMNS below, shell patterns); a suite that no
group names gets the column "other", so a new test is in the table without a change here.
A cell is ✔ with the number of tests that passed, ✘ with failed/total (the failures are
listed under the table), or — when nothing ran. A test of the core set that failed and then
passed when run again counts as passed, is marked in its cell ("1 on retry") and named under
the table. The variant of each BPF program comes from
`kperf-bpf features`. Exit status 1 when a selected kernel failed a test or did not finish.
"""

import fnmatch
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

COLUMNS = [
    ("trace", ["trace", "trace_*", "qa_trace", "qa_trace_*"]),
    ("stat", ["counting", "counting_*", "stat_*"]),
    ("record", ["sampling", "sampling_*", "record_*", "qa_dump"]),
    ("tracepoints", ["tp_*", "qa_tp"]),
    ("list, uncore", ["cli_list", "uncore_*"]),
    ("BPF load, features", ["bpf_load*"]),
    ("uprobes (UTrace)", ["utrace*"]),
]
MARKERS = {
    "core": ("<!-- kernel-matrix: begin (make test-kernels writes this table) -->",
             "<!-- kernel-matrix: end -->"),
    "full": ("<!-- kernel-matrix-full: begin (make test-kernels-full writes this table) -->",
             "<!-- kernel-matrix-full: end -->"),
}


def column_of(suite):
    for col, pats in COLUMNS:
        if any(fnmatch.fnmatchcase(suite, p) for p in pats):
            return col
    return "other"


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return default


def criterion_json(text):
    """criterion 2.4 writes assertion messages into its JSON without escaping them: quote
    every line of a "messages" array again."""
    out, in_messages = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if in_messages and stripped.startswith("]"):
            in_messages = False
        elif in_messages:
            m = re.match(r'^(\s*)"(.*)"(,?)$', line)
            if m:
                line = m.group(1) + json.dumps(m.group(2)) + m.group(3)
        if stripped.endswith('"messages": ['):
            in_messages = True
        out.append(line)
    return json.loads("\n".join(out), strict=False)


def criterion(path):
    """{suite: [(test, status, message)]} from criterion's --json output."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            data = criterion_json(f.read())
    except (OSError, ValueError):
        return None
    out = {}
    for s in data.get("test_suites", []):
        for t in s.get("tests", []):
            msg = " ".join(m.strip() for m in t.get("messages", []) if m.strip())
            out.setdefault(s["name"], []).append((t["name"], t["status"], msg))
    return out


def criterion_log(path):
    """The same from a --verbose log, for a run cut off before it wrote its JSON: a test
    that started and never ended is the one that hung."""
    text = read(path)
    if not text:
        return None
    out, running = {}, None
    for line in text.splitlines():
        m = re.match(r"^\[(RUN |PASS|FAIL|SKIP)\] (\w+)::(\w+)", line)
        if not m:
            continue
        kind, suite, test = m.groups()
        if kind == "RUN ":
            running = (suite, test)
            continue
        status = {"PASS": "PASSED", "FAIL": "FAILED", "SKIP": "SKIPPED"}[kind]
        out.setdefault(suite, []).append((test, status, ""))
        running = None
    if running:
        out.setdefault(running[0], []).append(
            (running[1], "FAILED", "did not end: the phase's time limit cut it off"))
    return out


def pytest_results(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    res = []
    for tc in root.iter("testcase"):
        name = tc.get("classname", "").split(".")[-1] + "::" + tc.get("name", "")
        status, msg = "PASSED", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                status, msg = "FAILED", (child.get("message") or "")[:300]
            elif child.tag == "skipped":
                status = "SKIPPED"
        res.append((name, status, msg))
    return res


def cell(results):
    if not results:
        return "—"
    ran = [r for r in results if r[1] != "SKIPPED"]
    bad = [r for r in ran if r[1] not in ("PASSED", "RETRIED")]
    retried = sum(1 for r in ran if r[1] == "RETRIED")
    if not ran:
        return "skipped"
    if bad:
        return f"✘ {len(bad)}/{len(ran)}"
    return f"✔ {len(ran)}" + (f" ({retried} on retry)" if retried else "")


def retried(first, again, key):
    """first's results with each failed test that passed in again (the retry phase) marked
    RETRIED; again is None when nothing was run again."""
    if not again:
        return first
    passed = {key(t) for t in again if t[1] == "PASSED"}
    return [(t[0], "RETRIED", t[2]) if t[1] == "FAILED" and key(t) in passed else t
            for t in first]


def failed(path):
    """What failed in a criterion JSON (suite/test, joined by |) or a pytest XML (node ids)."""
    if path.endswith(".xml"):
        out = []
        try:
            cases = ET.parse(path).getroot().iter("testcase")
        except (OSError, ET.ParseError):
            return ""
        for tc in cases:
            if any(c.tag in ("failure", "error") for c in tc):
                # classname tests.python.MODULE[.CLASS]: the node id tests/python/MODULE.py::...
                parts = tc.get("classname", "").split(".")[2:]
                if parts:
                    out.append(f"tests/python/{parts[0]}.py::"
                               + "::".join(parts[1:] + [tc.get("name", "")]))
        return " ".join(out)
    res = criterion(path) or {}
    return "|".join(f"{suite}/{t}" for suite, tests in res.items()
                    for t, st, _ in tests if st not in ("PASSED", "SKIPPED"))


def variants(features):
    """The 'variant' lines of `kperf-bpf features`: 'program: variant'."""
    out = []
    for line in features.splitlines():
        m = re.match(r"\s*variant\s+(\S+)\s+(.*)$", line)
        if m:
            out.append(f"{m.group(1)}: {m.group(2).strip()}")
    return "; ".join(out) if out else "—"


def main():
    args = sys.argv[1:]
    if args[:1] == ["--failed"]:
        print(failed(args[1]))
        return 0
    root = args[0]
    kset = args[args.index("--set") + 1] if "--set" in args else "core"
    flaky = []
    readme = args[args.index("--readme") + 1] if "--readme" in args else None
    select = args[args.index("--select") + 1] if "--select" in args else ""
    order = []
    listing = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.list")
    for line in open(listing, encoding="utf-8"):
        f = line.split()
        if f and not f[0].startswith("#"):
            order.append(f"{f[0]}-{f[1]}")
    rows, failures, ok = [], [], True
    cpu_total, verifier, skipped_suites = [0], [], set()
    extra_cols = []
    for key in order:
        d = os.path.join(root, key)
        if not os.path.isdir(d):
            continue
        name, arch = key.split("-", 1)
        chosen = not select or any(s in (name, arch, key) for s in select.split())
        release = read(os.path.join(d, "release")) or read(os.path.join(d, "package-release"))
        row = {"kernel": f"{release or name} ({arch})", "cols": {}}
        skipped = read(os.path.join(d, "skipped"))
        phases = {}
        for line in read(os.path.join(d, "phases")).splitlines():
            p = line.split()
            if len(p) == 3:
                phases[p[0]] = (int(p[1]), int(p[2]))
        boot = read(os.path.join(d, "boot")).split()
        row["time"] = f"{boot[1]} s" if len(boot) >= 2 else "—"
        if len(boot) >= 3 and boot[2].isdigit():
            row["time"] += f" ({boot[2]} s CPU)"
            cpu_total[0] += int(boot[2])
        m = re.search(r"verifier log of (\S+): (.*)", read(os.path.join(d, "integration.log")))
        if m:
            verifier.append(f"{key} ({m.group(1)}): ...{m.group(2)[-160:]}")
        left_out = read(os.path.join(d, "skipped-suites"))
        if left_out:
            skipped_suites.add(", ".join(line.split()[1] for line in left_out.splitlines()))
        row["variants"] = variants(read(os.path.join(d, "features.txt")))
        if skipped:
            row["note"] = skipped
            rows.append(row)
            continue
        bootinfo = read(os.path.join(d, "boot"))
        if "timeout" in bootinfo or "done" not in read(os.path.join(d, "phases")):
            row["note"] = "did not finish: " + (
                "cut by KPERF_KERNEL_DEADLINE (the run's budget)"
                if "KPERF_KERNEL_DEADLINE" in bootinfo
                else "timeout" if "timeout" in bootinfo else "see console.log"
            )
            # a guest the run's budget cut is reported, not failed: its finished tests count
            ok = ok and (not chosen or "KPERF_KERNEL_DEADLINE" in bootinfo)
        groups = {}
        again = criterion(os.path.join(d, "integration-retry.json")) or {}
        for part in ("unit", "integration", "integration-late"):
            res = criterion(os.path.join(d, f"{part}.json"))
            if res is None:
                res = criterion_log(os.path.join(d, f"{part}.log"))
            if res is not None and "KPERF_KERNEL_DEADLINE" in bootinfo:
                res = {suite: [(t, "SKIPPED", m) if m.startswith("did not end") else (t, st, m)
                               for t, st, m in tests] for suite, tests in res.items()}
            if res is not None and part == "integration":
                res = {suite: retried(tests, again.get(suite), lambda t: t[0])
                       for suite, tests in res.items()}
            if res is None:
                if part in phases:
                    failures.append(f"{key}: {part} produced no result (exit {phases[part][0]})")
                    ok = ok and not chosen
                continue
            for suite, tests in res.items():
                col = "unit" if part == "unit" else column_of(suite)
                if col not in [c for c, _ in COLUMNS] + ["unit"] and col not in extra_cols:
                    extra_cols.append(col)
                groups.setdefault(col, []).extend(tests)
                for t, st, msg in tests:
                    if st == "RETRIED":
                        flaky.append(f"{key}: {suite}/{t}: {msg[:300]}")
                    elif st not in ("PASSED", "SKIPPED"):
                        failures.append(f"{key}: {suite}/{t}: {msg[:300]}")
                        ok = ok and not chosen
        py = pytest_results(os.path.join(d, "python.xml"))
        if py is not None:
            py = retried(py, pytest_results(os.path.join(d, "python-retry.xml")),
                         lambda t: t[0])
            groups["python"] = py
            for t, st, msg in py:
                if st == "RETRIED":
                    flaky.append(f"{key}: python {t}: {msg}")
                elif st == "FAILED":
                    failures.append(f"{key}: python {t}: {msg}")
                    ok = ok and not chosen
        row["cols"] = {c: cell(v) for c, v in groups.items()}
        rows.append(row)
    cols = [c for c, _ in COLUMNS] + extra_cols + ["python"]
    if any("unit" in r["cols"] for r in rows):  # the unit tests run only on request
        cols.append("unit")
    lines = [
        "| kernel | BPF programs loaded | " + " | ".join(cols) + " | boot + tests |",
        "| --- | --- | " + " | ".join("---" for _ in cols) + " | ---: |",
    ]
    for r in rows:
        if "note" in r and not r["cols"]:
            lines.append(f"| {r['kernel']} | {r['note']} | " + " | ".join("" for _ in cols)
                         + f" | {r['time']} |")
            continue
        cells = [r["cols"].get(c, "—") for c in cols]
        lines.append(f"| {r['kernel']} | {r['variants']} | " + " | ".join(cells)
                     + f" | {r['time']} |")
        if "note" in r:
            failures.append(f"{r['kernel']}: {r['note']}")
    table = "\n".join(lines)
    print(table)
    if cpu_total[0]:
        print(f"\nCPU time of the guests: {cpu_total[0]} s (the wall time of the matrix on two "
              f"idle cores: about {cpu_total[0] // 2} s)")
    if kset == "core":
        print("the core set: the tests tests/kernels/core.list names "
              "(make test-kernels-full runs every suite but skip.list's)")
    for s in sorted(skipped_suites):
        print(f"left out (tests/kernels/skip.list; KPERF_KERNEL_ALL=1 runs them): {s}")
    if verifier:
        print("\nthe forced verifier rejection (bpf_load), as each kernel's verifier said it:")
        for v in verifier:
            print("  " + v)
    if flaky:
        print("\nfailed, then passed when run again (flaky under emulation: look at them):")
        for f in flaky:
            print("  " + f)
    if failures:
        print("\nfailures:")
        for f in failures:
            print("  " + f)
    if readme and rows:
        BEGIN, END = MARKERS[kset]
        text = open(readme, encoding="utf-8").read()
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            _, tail = rest.split(END, 1)
            text = head + BEGIN + "\n" + table + "\n" + END + tail
            with open(readme, "w", encoding="utf-8") as f:
                f.write(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
