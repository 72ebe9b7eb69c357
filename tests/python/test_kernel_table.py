"""The kernel matrix's bookkeeping (tests/kernels): table.py's cells, retries, failures and
budget cuts from the files a guest writes, and core.list naming only suites and files that
exist. No guest is booted here: `make test-kernels` does that."""

import json
import os
import re
import subprocess
import sys


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(ROOT, "tests", "kernels", "table.py")
CORE = os.path.join(ROOT, "tests", "kernels", "core.list")


def criterion_json(path, results):
    """results: {suite: [(test, status)]}, written as criterion 2.4's --json does."""
    suites = []
    for suite, tests in results.items():
        suites.append({"name": suite, "tests": [
            {"name": t, "assertions": 1, "status": st,
             "messages": ["test.c:1: Assertion failed: 3 != 4"] if st == "FAILED" else []}
            for t, st in tests]})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"id": "Criterion v2.4.1", "test_suites": suites}, f, indent=2)


def junit(path, cases):
    """cases: [(classname, name, failed)]"""
    body = "".join(
        f'<testcase classname="{c}" name="{n}">'
        + ('<failure message="assert 3 == 4"/>' if bad else "") + "</testcase>"
        for c, n, bad in cases)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"<testsuites><testsuite>{body}</testsuite></testsuites>")


def guest(root, key, phases, boot="0 300 150"):
    d = os.path.join(root, key)
    os.makedirs(d)
    with open(os.path.join(d, "release"), "w") as f:
        f.write("6.1.0-56-amd64\n" if key.startswith("6.1") else "5.10.0-32-amd64\n")
    with open(os.path.join(d, "boot"), "w") as f:
        f.write(boot + "\n")
    with open(os.path.join(d, "phases"), "w") as f:
        f.write("".join(f"{p} 0 10\n" for p in phases))
    return d


def table(root, *args):
    return subprocess.run([sys.executable, TABLE, str(root), *args],
                          capture_output=True, text=True, timeout=60)


def test_a_test_that_passes_on_retry_is_passed_and_named(tmp_path):
    d = guest(tmp_path, "6.1-amd64", ["features", "integration", "integration-retry",
                                      "python", "python-retry", "done"])
    criterion_json(os.path.join(d, "integration.json"), {
        "trace": [("exact", "PASSED"), ("drops", "FAILED"), ("other", "SKIPPED")],
        "counting": [("a", "PASSED")]})
    criterion_json(os.path.join(d, "integration-retry.json"), {
        "trace": [("exact", "SKIPPED"), ("drops", "PASSED")]})
    junit(os.path.join(d, "python.xml"), [
        ("tests.python.test_trace", "test_a", False),
        ("tests.python.test_errors.TestTraceOpen", "test_b[x]", True)])
    junit(os.path.join(d, "python-retry.xml"), [
        ("tests.python.test_errors.TestTraceOpen", "test_b[x]", False)])
    r = table(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    row = [line for line in r.stdout.splitlines() if line.startswith("| 6.1.0-56-amd64")][0]
    cells = [c.strip() for c in row.split("|")]
    head = [c.strip() for c in r.stdout.splitlines()[0].split("|")]
    assert cells[head.index("trace")] == "✔ 2 (1 on retry)"
    assert cells[head.index("stat")] == "✔ 1"
    assert cells[head.index("python")] == "✔ 2 (1 on retry)"
    flaky = r.stdout.split("failed, then passed when run again")[1]
    assert "6.1-amd64: trace/drops: test.c:1: Assertion failed: 3 != 4" in flaky
    assert "6.1-amd64: python TestTraceOpen::test_b[x]: assert 3 == 4" in flaky
    assert "\nfailures:" not in r.stdout


def test_a_test_that_fails_twice_fails_the_run(tmp_path):
    d = guest(tmp_path, "5.10-amd64", ["features", "integration", "integration-retry", "done"])
    criterion_json(os.path.join(d, "integration.json"), {"sampling": [("hot", "FAILED")]})
    criterion_json(os.path.join(d, "integration-retry.json"), {"sampling": [("hot", "FAILED")]})
    r = table(tmp_path)
    assert r.returncode == 1
    assert "✘ 1/1" in r.stdout
    assert "5.10-amd64: sampling/hot: test.c:1: Assertion failed: 3 != 4" in \
        r.stdout.split("\nfailures:")[1]


def test_the_failed_tests_are_what_a_guest_runs_again(tmp_path):
    j = tmp_path / "i.json"
    criterion_json(str(j), {"trace": [("a", "PASSED"), ("b", "FAILED")],
                            "unwind": [("c", "FAILED"), ("d", "SKIPPED")]})
    x = tmp_path / "p.xml"
    junit(str(x), [("tests.python.test_trace", "test_a", True),
                   ("tests.python.test_errors.TestTraceOpen", "test_b[x]", True),
                   ("tests.python.test_pmu", "test_c", False)])
    out = subprocess.run([sys.executable, TABLE, "--failed", str(j)], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "trace/b|unwind/c"
    out = subprocess.run([sys.executable, TABLE, "--failed", str(x)], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == ("tests/python/test_trace.py::test_a "
                   "tests/python/test_errors.py::TestTraceOpen::test_b[x]")


def test_a_guest_cut_by_the_deadline_is_reported_not_failed(tmp_path):
    d = guest(tmp_path, "6.1-amd64", ["features"],
              boot="124 400 200\ntimeout after 400 s (KPERF_KERNEL_DEADLINE)")
    with open(os.path.join(d, "integration.log"), "w") as f:
        f.write("[RUN ] trace::exact\n[PASS] trace::exact: (1.00s)\n[RUN ] trace::drops\n")
    r = table(tmp_path)
    assert r.returncode == 0, r.stdout
    assert "cut by KPERF_KERNEL_DEADLINE (the run's budget)" in r.stdout
    # the same cut by the guest's own limit is a failure: the test that did not end is named
    with open(os.path.join(d, "boot"), "w") as f:
        f.write("124 1500 700\ntimeout after 1500 s\n")
    r = table(tmp_path)
    assert r.returncode == 1
    assert "6.1-amd64: trace/drops: did not end: the phase's time limit cut it off" in r.stdout


def test_the_table_goes_between_its_own_markers(tmp_path):
    d = guest(tmp_path, "6.1-amd64", ["features", "integration", "done"])
    criterion_json(os.path.join(d, "integration.json"), {"trace": [("a", "PASSED")]})
    readme = tmp_path / "README.md"
    text = ("x\n<!-- kernel-matrix: begin (make test-kernels writes this table) -->\nold\n"
            "<!-- kernel-matrix: end -->\ny\n<!-- kernel-matrix-full: begin (make "
            "test-kernels-full writes this table) -->\nfull\n<!-- kernel-matrix-full: end -->\n")
    readme.write_text(text)
    assert table(tmp_path, "--readme", str(readme), "--set", "full").returncode == 0
    after = readme.read_text()
    assert "\nold\n" in after and "\nfull\n" not in after and "✔ 1" in after
    assert table(tmp_path, "--readme", str(readme)).returncode == 0
    assert "\nold\n" not in readme.read_text()


def suites_and_tests():
    """{suite: {test}} of tests/integration, from its Test(suite, name ...) declarations."""
    out = {}
    idir = os.path.join(ROOT, "tests", "integration")
    for name in os.listdir(idir):
        if name.endswith(".c"):
            src = open(os.path.join(idir, name), encoding="utf-8").read()
            for suite, test in re.findall(r"\bTest\(\s*(\w+)\s*,\s*(\w+)", src):
                out.setdefault(suite, set()).add(test)
    return out


def test_core_list_names_only_what_exists():
    import fnmatch
    known = suites_and_tests()
    assert len(known) > 30
    lines = [line.split("#")[0].split() for line in open(CORE, encoding="utf-8")]
    lines = [f for f in lines if f]
    assert {f[0] for f in lines} <= {"integration", "python", "python-deselect"}
    for kind, what in lines:
        if kind == "python":
            assert os.path.exists(os.path.join(ROOT, "tests", "python", what)), what
            continue
        if kind == "python-deselect":
            path, test = what.split("::", 1)
            assert [f[1] for f in lines if f[0] == "python"].count(path) == 1, what
            src = open(os.path.join(ROOT, "tests", "python", path), encoding="utf-8").read()
            assert f"def {test}(" in src, what
            continue
        suite, test = what.split("/", 1)
        assert suite in known, f"core.list: no suite {suite}"
        assert any(fnmatch.fnmatchcase(t, test) for t in known[suite]), \
            f"core.list: {what} matches no test"


def test_bad_set_is_refused():
    r = subprocess.run(["sh", os.path.join(ROOT, "tests", "kernels", "run.sh"), "6.1"],
                       env={**os.environ, "KPERF_KERNEL_SET": "most"},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "kernels: KPERF_KERNEL_SET is core or full, not 'most'" in r.stderr
