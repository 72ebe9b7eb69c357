"""The ctypes mirrors (kperf/_cstructs.py) against the C compiler, so that they cannot drift
from include/kperf/*.h.

clang's AST of pmu.h gives every struct's fields (anonymous unions flattened) and every
enumerator; a small C program compiled with the library's compiler prints each struct's
sizeof, each field's offsetof and sizeof, each bitfield's first bit and width, and each
enumerator's value; the test compares all of them with ctypes.
"""

import ctypes
import enum
import json
import os
import shutil
import subprocess

import kperf
import pytest
from conftest import REPO
from kperf import _cstructs as cs

INCLUDE = os.path.join(REPO, "include")
CC = os.environ.get("CC") or "cc"

# C enum -> the Python class that mirrors it
ENUMS = {
    "PmuTaskType": kperf.PmuTaskType,
    "PmuEventType": kperf.PmuEventType,
    "SpeFilter": kperf.SpeFilter,
    "SpeEventFilter": kperf.SpeEventFilter,
    "SymbolMode": kperf.SymbolMode,
    "BranchSampleFilter": kperf.BranchSampleFilter,
    "PmuTraceType": kperf.PmuTraceType,
    "SPE_EVENTS": kperf.SpeEvent,
    "PmuDeviceMetric": kperf.PmuDeviceMetric,
    "PmuBdfType": kperf.PmuBdfType,
    "PmuMetricMode": kperf.PmuMetricMode,
    "HIP_DATA_SOURCE": kperf.HipDataSource,
    "SpeLdStOpType": kperf.SpeLdStOpType,
    "PmuHwMetric": kperf.PmuHwMetric,
    "KperfActivityKind": __import__("kperf.activity", fromlist=["x"]).KperfActivityKind,
    "KperfActivityFlag": __import__("kperf.activity", fromlist=["x"]).KperfActivityFlag,
    **__import__("kperf._procstructs", fromlist=["ENUMS"]).ENUMS,
}


def ctypes_fields(cls):
    """[(name, is_bitfield)] of a ctypes struct, anonymous members flattened."""
    out = []
    anon = getattr(cls, "_anonymous_", ())
    for f in cls._fields_:
        name, typ = f[0], f[1]
        if name in anon:
            out.extend(ctypes_fields(typ))
        elif name.startswith("_pad"):
            continue  # padding that C gets from an alignment attribute
        else:
            out.append((name, len(f) == 3))
    return out


@pytest.fixture(scope="module")
def c_ast(tmp_path_factory):
    """(fields of each mirrored struct, enumerators of each mirrored enum) from clang."""
    clang = shutil.which("clang")
    if not clang:
        pytest.skip("clang is not installed (it is a build dependency: make deps)")
    src = tmp_path_factory.mktemp("ast") / "h.c"
    src.write_text('#include "kperf/kperf.h"\n')
    out = subprocess.run(
        [clang, "-I", INCLUDE, "-Xclang", "-ast-dump=json", "-fsyntax-only", str(src)],
        check=True,
        capture_output=True,
    ).stdout
    tu = json.loads(out)

    def flatten(rec):
        fields = []
        for n in rec.get("inner", []):
            if n.get("kind") == "RecordDecl" and not n.get("name"):
                fields.extend(flatten(n))
            elif n.get("kind") == "FieldDecl" and n.get("name"):
                fields.append((n["name"], bool(n.get("isBitfield"))))
        return fields

    # only what include/kperf/ declares; clang names a node's file only when it changes
    structs, enums, cur = {}, {}, ""
    for n in tu["inner"]:
        loc = n.get("loc", {})
        cur = loc.get("file") or loc.get("spellingLoc", {}).get("file") or cur
        if "/kperf/" not in cur or not n.get("name"):
            continue
        if n.get("kind") == "RecordDecl" and n.get("completeDefinition"):
            structs[n["name"]] = flatten(n)
        elif n.get("kind") == "EnumDecl":
            enums[n["name"]] = [
                c["name"] for c in n.get("inner", []) if c.get("kind") == "EnumConstantDecl"
            ]
    return structs, enums


@pytest.fixture(scope="module")
def c_layout(tmp_path_factory, c_ast):
    """{"S": size, "S.f": (offset, size) or ("bit", first bit, width), "E:NAME": value}."""
    structs, enums = c_ast
    lines = [
        "#include <stdio.h>",
        "#include <string.h>",
        "#include <stddef.h>",
        '#include "kperf/kperf.h"',
        "static void bits(const char *n, const unsigned char *p, size_t len, int one) {",
        "\tsize_t i; int b, first = -1, width = 0;",
        "\tfor (i = 0; i < len; i++) for (b = 0; b < 8; b++) if (p[i] >> b & 1) {",
        "\t\tif (first < 0) first = (int)(i * 8 + b); width++; }",
        '\tif (one) printf("%s bit %d\\n", n, first); else printf("%s width %d\\n", n, width);',
        "}",
        "int main(void) {",
    ]
    for s in cs.ALL:
        lines.append(f'\tprintf("{s} %zu\\n", sizeof(struct {s}));')
        for f, is_bits in structs[s]:
            if is_bits:
                lines += [
                    f"\t{{ struct {s} v; memset(&v, 0, sizeof(v)); v.{f} = 1;",
                    f'\t  bits("{s}.{f}", (void *)&v, sizeof(v), 1);',
                    f"\t  memset(&v, 0, sizeof(v)); v.{f} = -1;",
                    f'\t  bits("{s}.{f}", (void *)&v, sizeof(v), 0); }}',
                ]
            else:
                lines.append(
                    f'\tprintf("{s}.{f} %zu %zu\\n", offsetof(struct {s}, {f}), '
                    f"sizeof(((struct {s} *)0)->{f}));"
                )
    for e, names in enums.items():
        for n in names:
            lines.append(f'\tprintf("E:{n} %lld\\n", (long long){n});')
    lines.append('\tprintf("E:KPERF_HIST_SLOTS %d\\n", KPERF_HIST_SLOTS);')
    lines += ["\treturn 0;", "}"]
    d = tmp_path_factory.mktemp("layout")
    (d / "layout.c").write_text("\n".join(lines) + "\n")
    subprocess.run(
        [CC, "-std=gnu11", "-w", "-I", INCLUDE, "-o", str(d / "layout"), str(d / "layout.c")],
        check=True,
    )
    out = subprocess.run([str(d / "layout")], check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        key, *vals = line.split()
        if len(vals) == 1:
            res[key] = int(vals[0])
        elif vals[0] in ("bit", "width"):
            res.setdefault(key, {})[vals[0]] = int(vals[1])
        else:
            res[key] = (int(vals[0]), int(vals[1]))
    return res


@pytest.mark.parametrize("name", list(cs.ALL))
def test_fields_are_those_of_c(c_ast, name):
    structs, _ = c_ast
    assert ctypes_fields(cs.ALL[name]) == structs[name]


def test_every_public_struct_and_enum_is_mirrored(c_ast):
    structs, enums = c_ast
    assert "PmuTraceSummary" in structs and "Symbol" in structs
    assert set(structs) == set(cs.ALL), "a struct of include/kperf has no ctypes mirror"
    assert set(enums) == set(ENUMS), "an enum of include/kperf has no Python mirror"


def ctypes_bits(cls, field):
    """(first bit, width) of a ctypes bitfield, measured the way the C program does."""
    v = cls()
    setattr(v, field, 1)
    raw = bytes(v)
    first = next(i * 8 + b for i, byte in enumerate(raw) for b in range(8) if byte >> b & 1)
    v = cls()
    setattr(v, field, (1 << 64) - 1)
    width = sum(bin(byte).count("1") for byte in bytes(v))
    return first, width


@pytest.mark.parametrize("name", list(cs.ALL))
def test_sizes_offsets_and_bits(c_layout, name):
    cls = cs.ALL[name]
    assert ctypes.sizeof(cls) == c_layout[name], f"sizeof(struct {name})"
    for f, is_bits in ctypes_fields(cls):
        c = c_layout[f"{name}.{f}"]
        if is_bits:
            assert ctypes_bits(cls, f) == (c["bit"], c["width"]), f"{name}.{f}"
        else:
            desc = getattr(cls, f)
            assert (desc.offset, desc.size) == c, f"{name}.{f}: offset, size"


def test_enum_values(c_ast, c_layout):
    _, enums = c_ast
    for e, names in enums.items():
        py = ENUMS[e]
        for n in names:
            assert n in py.__members__, f"{e}.{n} missing from kperf.{py.__name__}"
            assert int(py[n]) == c_layout[f"E:{n}"], f"{e}.{n}"
        for n, m in py.__members__.items():
            if n not in names:
                assert n == "COUTING" and m is py.COUNTING, f"kperf.{py.__name__}.{n} is not in C"
    assert cs.KPERF_HIST_SLOTS == c_layout["E:KPERF_HIST_SLOTS"]


def test_task_type_alias():
    assert kperf.PmuTaskType.COUTING is kperf.PmuTaskType.COUNTING
    assert isinstance(kperf.PmuTaskType.SAMPLING, enum.IntEnum) and kperf.PmuTaskType.SAMPLING == 1
