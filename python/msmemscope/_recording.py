"""Reading a memscope recording: the CSV file or SQLite database `kperf-bpf memscope` writes,
with msMemScope's dump columns, checked and parsed into rows; and writing analysis results
back into it. Standard library only.
"""

import csv
import os
import re
import sqlite3
import tempfile

#: the columns of msMemScope's dump, in order (the file's header)
COLUMNS = ("ID", "Event", "Event Type", "Name", "Timestamp(ns)", "Process Id", "Thread ID",
           "Device ID", "Ptr", "Attr", "Call Stack(Python)", "Call Stack(C)")
#: the table of a SQLite recording
TABLE = "memscope_dump"

_SQLITE_MAGIC = b"SQLite format 3\x00"


class MemScopeError(ValueError):
    """A file that cannot be analyzed, or an argument that does not fit it; the message says
    which and why."""


class Row:
    """One event of a recording. `attr` is the Attr column parsed into a dict (numbers as
    int or float); `ptr` an int or None."""

    __slots__ = ("id", "event", "type", "name", "ts", "pid", "tid", "device", "ptr", "attr",
                 "attr_text", "py_stack", "c_stack")

    def __repr__(self):
        return (f"Row(id={self.id}, event={self.event!r}, type={self.type!r}, "
                f"name={self.name!r}, ts={self.ts}, ptr={self.ptr!r}, attr={self.attr!r})")

    @property
    def leaf(self):
        """The function of the allocation stack's first frame ('' when none)."""
        first = self.c_stack.split(";", 1)[0]
        return first.rsplit(" (", 1)[0] if first else ""


_ATTR_ITEM = re.compile(r"\s*([^:,{}]+?)\s*:\s*([^,{}]*?)\s*(?:,|$)")


def parse_attr(text):
    """'{size:100,allocation_id:4,owner:libc.so.6}' -> {'size': 100, ...}"""
    text = (text or "").strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    out = {}
    for m in _ATTR_ITEM.finditer(text):
        key, val = m.group(1), m.group(2)
        if re.fullmatch(r"-?\d+", val):
            out[key] = int(val)
        elif re.fullmatch(r"-?\d+\.\d*", val):
            out[key] = float(val)
        else:
            out[key] = val
    return out


def format_attr(attr):
    """The inverse of parse_attr."""
    return "{" + ",".join(f"{k}:{v}" for k, v in attr.items()) + "}"


def _int(text, what, where):
    try:
        return int(text, 0) if text not in ("", None) else None
    except ValueError:
        raise MemScopeError(f"{where}: {what} {text!r} is not a number") from None


def _make_rows(records, where):
    rows = []
    for n, rec in enumerate(records):
        r = Row()
        line = f"{where}, row {n + 1}"
        r.id = _int(str(rec[0]), "ID", line)
        r.event, r.type, r.name = rec[1], rec[2], rec[3]
        r.ts = _int(str(rec[4]), "Timestamp(ns)", line)
        r.pid = _int(str(rec[5]), "Process Id", line)
        r.tid = _int(str(rec[6]), "Thread ID", line)
        r.device = rec[7]
        r.ptr = _int(rec[8], "Ptr", line)
        r.attr_text = rec[9] or ""
        r.attr = parse_attr(r.attr_text)
        r.py_stack, r.c_stack = rec[10] or "", rec[11] or ""
        if r.ts is None or r.id is None:
            raise MemScopeError(f"{line}: no ID or Timestamp(ns)")
        rows.append(r)
    return rows


def _check_header(header, path):
    if not header or not any(h in COLUMNS for h in header):
        raise MemScopeError(
            f"{path} is not a memscope recording: its first line is not msMemScope's header "
            f"({','.join(COLUMNS)})")
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise MemScopeError(
            f"{path} is not a complete memscope recording: column{'s' if len(missing) > 1 else ''}"
            f" {', '.join(repr(c) for c in missing)} missing")
    return [header.index(c) for c in COLUMNS]


def is_sqlite(path):
    with open(path, "rb") as f:
        return f.read(16) == _SQLITE_MAGIC


def load(path):
    """The rows of the recording at <path> (CSV or SQLite), in time order."""
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise MemScopeError(f"input_path must be the path of a recording, not {path!r}")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise MemScopeError(f"{path}: no such file")
    if os.path.isdir(path):
        raise MemScopeError(f"{path} is a directory, not a memscope recording")
    if is_sqlite(path):
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            try:
                cur = con.execute(f'SELECT * FROM "{TABLE}" ORDER BY "ID"')
            except sqlite3.Error as e:
                raise MemScopeError(
                    f"{path} is a SQLite database but not a memscope recording: {e}") from None
            header = [d[0] for d in cur.description]
            idx = _check_header(header, path)
            records = [[rec[i] for i in idx] for rec in cur]
        finally:
            con.close()
    else:
        try:
            with open(path, newline="", encoding="utf-8") as f:
                reader = csv.reader(f)
                header = next(reader, None)
                idx = _check_header(header, path)
                records = []
                for rec in reader:
                    if not rec:
                        continue
                    if len(rec) < len(header):
                        raise MemScopeError(
                            f"{path}, line {reader.line_num}: {len(rec)} fields, the header "
                            f"has {len(header)}")
                    records.append([rec[i] for i in idx])
        except UnicodeDecodeError:
            raise MemScopeError(f"{path} is not a memscope recording: not text") from None
        except csv.Error as e:
            raise MemScopeError(f"{path} is not a memscope recording: {e}") from None
    rows = _make_rows(records, path)
    rows.sort(key=lambda r: (r.ts, r.id))
    return rows


def write_attrs(path, changes):
    """Write new Attr texts back: <changes> maps a row ID to its new Attr text. CSV files are
    rewritten (a temporary file renamed over the old one), databases updated in place."""
    if not changes:
        return
    if is_sqlite(path):
        con = sqlite3.connect(path)
        try:
            with con:
                con.executemany(f'UPDATE "{TABLE}" SET "Attr" = ? WHERE "ID" = ?',
                                [(text, rid) for rid, text in changes.items()])
        finally:
            con.close()
        return
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        id_col, attr_col = header.index("ID"), header.index("Attr")
        records = list(reader)
    for rec in records:
        if rec and rec[id_col].isdigit() and int(rec[id_col]) in changes:
            rec[attr_col] = changes[int(rec[id_col])]
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".memscope-")
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(records)
        os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
