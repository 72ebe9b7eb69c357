"""Flame graphs as a person opens them (issue 10): `kperf-bpf record --format svg` writes a
valid XML document whose frames' widths are their values at one scale and add up (a frame's
callees never outgrow it, the root is the whole profile), and headless Chromium (Debian's
package) renders it: a screenshot is taken, the script runs (a search given in the URL
highlights frames and reports the share matched), and the hot function's frame is in the DOM.
Off-CPU and wall graphs mark the time off the CPU.
"""

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from conftest import BUILD

KB = os.path.join(BUILD, "bin", "kperf-bpf")
SVG = "{http://www.w3.org/2000/svg}"
ARTIFACTS = os.path.join(BUILD, "test-artifacts")


def chromium():
    path = shutil.which("chromium")
    if not path:
        pytest.fail("chromium is not installed: make deps installs it (the SVG test renders "
                    "the flame graph in a real browser)")
    return path


def record(tmp_path, name, *args):
    out = tmp_path / name
    r = subprocess.run([KB, "record", *args[:-1], "-o", str(out), "--", *args[-1]],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out, r.stdout


def frames(path):
    root = ET.parse(path).getroot()  # raises on a document that is not well-formed XML
    assert root.tag == SVG + "svg"
    group = root.find(f".//{SVG}g[@id='frames']")
    out = []
    for g in group.findall(f"{SVG}g"):
        rect = g.find(f"{SVG}rect")
        title = g.find(f"{SVG}title").text
        out.append(dict(name=title[: title.rindex(" (")], v=int(g.get("data-v")),
                        b=int(g.get("data-b")), x=int(g.get("data-x")), d=int(g.get("data-d")),
                        k=g.get("data-k"), left=float(rect.get("x")),
                        width=float(rect.get("width")), fill=rect.get("fill")))
    return int(group.get("data-total")), float(group.get("data-width")), out


def check_widths(total, width, fs):
    assert fs and fs[0]["name"] == "all" and fs[0]["v"] == total
    scale = width / total
    for f in fs:
        assert abs(f["width"] - f["v"] * scale) < 0.01, f
        assert abs(f["left"] - (10 + f["x"] * scale)) < 0.01, f
        kids = [c for c in fs if c["d"] == f["d"] + 1 and f["x"] <= c["x"] < f["x"] + f["v"]]
        assert sum(c["v"] for c in kids) <= f["v"], f
        for c in kids:
            assert c["x"] + c["v"] <= f["x"] + f["v"], (f, c)
    # nothing is lost: every unit of the profile ends in exactly one frame's self time
    self_total = 0
    for f in fs:
        kids = [c for c in fs if c["d"] == f["d"] + 1 and f["x"] <= c["x"] < f["x"] + f["v"]]
        self_total += f["v"] - sum(c["v"] for c in kids)
    assert self_total <= total
    assert total - self_total <= total * 0.001  # frames under 0.1 px are not drawn


def browse(svg, tag, query="", screenshot=True):
    """The DOM of <svg> in headless Chromium after its script ran, and a screenshot, which
    stays in the build tree (test-artifacts) to look at."""
    base = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--window-size=1200,700"]
    url = f"file://{svg}{query}"
    if screenshot:
        os.makedirs(ARTIFACTS, exist_ok=True)
        png = os.path.join(ARTIFACTS, f"flame-{tag}.png")
        if os.path.exists(png):
            os.unlink(png)
        subprocess.run(base + [f"--screenshot={png}", url], capture_output=True, timeout=120)
        with open(png, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
        assert os.path.getsize(png) > 5000
    dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True,
                         timeout=120).stdout
    assert "</svg>" in dom
    return dom


def test_cpu_flame_graph_opens_in_a_browser(tmp_path):
    svg, out = record(tmp_path, "cpu.svg", "-g", "-F", "999",
                      [os.path.join(BUILD, "workloads", "cpuburn"), "--ms", "400"])
    total, width, fs = frames(svg)
    check_widths(total, width, fs)
    assert re.search(rf"^ {total} samples$", out, re.M), out  # the summary's count
    hot = [f for f in fs if f["name"] == "hot_loop"]
    assert hot and sum(f["v"] for f in hot) >= 0.8 * total
    assert all(f["k"] == "u" and f["b"] == 0 for f in hot)
    dom = browse(svg, "cpu", "?s=^hot_loop$")
    assert "<title>hot_loop (" in dom
    m = re.search(r"Matched: ([0-9.]+)%", dom)
    assert m, "the search in the URL did not run"
    share = 100.0 * sum(f["v"] for f in hot) / total
    assert abs(float(m[1]) - share) < 0.01
    assert "fill: rgb(230, 0, 230)" in dom


def test_off_cpu_and_wall_graphs_mark_the_blocked_time(tmp_path):
    wl = [os.path.join(BUILD, "workloads", "offcpu"), "--rounds", "4", "--compute-ms", "10",
          "--block-ms", "20"]
    svg, _ = record(tmp_path, "off.svg", "--off-cpu", wl)
    total, width, fs = frames(svg)
    check_widths(total, width, fs)
    assert fs[0]["b"] == total, "an off-CPU profile is all time off the CPU"
    assert any(f["name"] == "wait_on_pipe" for f in fs)
    assert {f["k"] for f in fs if f["name"] == "schedule"} == {"k"}
    assert "<title>wait_on_pipe (" in browse(svg, "off-cpu", screenshot=False)
    svg, _ = record(tmp_path, "wall.svg", "--wall", wl)
    total, width, fs = frames(svg)
    check_widths(total, width, fs)
    off = [f for f in fs if f["name"] == "[off-cpu]"]
    assert off and all(f["k"] == "b" and f["b"] == f["v"] for f in off)
    assert 0 < fs[0]["b"] < total, "a wall profile has time on and off the CPU"
    compute = [f for f in fs if f["name"] == "compute"]
    # drawn once: its on-CPU samples and a preemption's off-CPU stack are unwound alike (both
    # from .eh_frame; the off-CPU side by frame pointers drew it a second time, at another depth)
    assert len(compute) == 1, compute
    assert compute[0]["v"] > compute[0]["b"]
    assert "<title>[off-cpu] (" in browse(svg, "wall")
