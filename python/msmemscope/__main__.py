"""`python3 -m msmemscope analyze leaks|inefficient FILE ...`, which `kperf-bpf memscope
analyze` runs: the analyzers from the command line. Exit status 0, 1 after an error message,
2 for a usage error."""

import argparse
import sys

from . import INEFFICIENT_TYPES, MemScopeError, check_inefficient, check_leaks


def _parser():
    p = argparse.ArgumentParser(prog="kperf-bpf memscope analyze",
                                description="Analyze a recording of kperf-bpf memscope.")
    sub = p.add_subparsers(dest="type", metavar="leaks|inefficient")
    sub.required = True
    lk = sub.add_parser("leaks", help="blocks allocated between two marks and not freed")
    lk.add_argument("file")
    lk.add_argument("--mstx-info", required=True, help="the text of the marks")
    lk.add_argument("--start-index", type=int, default=0,
                    help="the mark that starts the analysis (0: the first)")
    ie = sub.add_parser("inefficient", help="early_allocation, late_deallocation, "
                                           "temporary_idleness")
    ie.add_argument("file")
    ie.add_argument("--mem-size", type=int, default=0, help="the smallest block, bytes")
    ie.add_argument("--type", default=",".join(INEFFICIENT_TYPES),
                    help="the kinds, comma-separated (default: all)")
    ie.add_argument("--idle-threshold", type=int, default=3000,
                    help="allocator calls between two uses that make a block idle")
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "analyze":
        argv = argv[1:]
    a = _parser().parse_args(argv)
    try:
        if a.type == "leaks":
            check_leaks(a.file, a.mstx_info, a.start_index)
        else:
            check_inefficient(a.file, a.mem_size, [t for t in a.type.split(",") if t],
                              a.idle_threshold)
    except MemScopeError as e:
        print(f"kperf-bpf memscope analyze: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"kperf-bpf memscope analyze: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
