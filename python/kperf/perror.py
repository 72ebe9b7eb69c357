"""Errors and warnings: kperf.error(), kperf.errorno(), kperf.get_warn(), the codes.

A function of the libkperf API that fails returns -1 (or an empty result) and leaves a code
and a sentence that says what to do; kperf.errorno() / kperf.error() return them for the
last kperf call made by the calling thread. The additions of kperf-bpf that return Python
objects (Pmu, Trace, trace_read_summary, trace_stats) raise KperfError instead, carrying
the same code and message.
"""

from . import _lib


class Error:
    """Error and warning codes of include/kperf/pcerrc.h (libkperf numbering)."""

    SUCCESS = 0
    COMMON_ERR_NOMEM = 1

    LIBSYM_ERR_BASE = 100
    LIBSYM_ERR_KALLSYMS_INVALID = 100
    LIBSYM_ERR_DWARF_FORMAT_FAILED = 101
    LIBSYM_ERR_ELFIN_FOMAT_FAILED = 102
    LIBSYM_ERR_OPEN_FILE_FAILED = 103
    LIBSYM_ERR_NOT_FIND_PID = 104
    LIBSYM_ERR_MAP_ADDR_MODULE_FAILED = 105
    LIBSYM_ERR_MAP_KERNAL_ADDR_FAILED = 106
    LIBSYM_ERR_PARAM_PID_INVALID = 107
    LIBSYM_ERR_STRCPY_OPERATE_FAILED = 108
    LIBSYM_ERR_SNPRINF_OPERATE_FAILED = 109
    LIBSYM_ERR_MAP_CODE_KERNEL_NOT_SUPPORT = 110
    LIBSYM_ERR_MAP_CODE_FIND_ELF_FAILED = 111
    LIBSYM_ERR_CMD_OPERATE_FAILED = 112
    LIBSYM_ERR_FILE_NOT_RGE = 113
    LIBSYM_ERR_START_SMALLER_END = 114
    LIBSYM_ERR_STOUL_OPERATE_FAILED = 115
    LIBSYM_ERR_FILE_INVALID = 116

    LIBPERF_ERR_NO_AVAIL_PD = 1000
    LIBPERF_ERR_CHIP_TYPE_INVALID = 1001
    LIBPERF_ERR_FAIL_LISTEN_PROC = 1002
    LIBPERF_ERR_INVALID_CPULIST = 1003
    LIBPERF_ERR_INVALID_PIDLIST = 1004
    LIBPERF_ERR_INVALID_EVTLIST = 1005
    LIBPERF_ERR_INVALID_PD = 1006
    LIBPERF_ERR_INVALID_EVENT = 1007
    LIBPERF_ERR_SPE_UNAVAIL = 1008
    LIBPERF_ERR_FAIL_GET_CPU = 1009
    LIBPERF_ERR_FAIL_GET_PROC = 1010
    LIBPERF_ERR_NO_PERMISSION = 1011
    LIBPERF_ERR_DEVICE_BUSY = 1012
    LIBPERF_ERR_DEVICE_INVAL = 1013
    LIBPERF_ERR_FAIL_MMAP = 1014
    LIBPERF_ERR_FAIL_RESOLVE_MODULE = 1015
    LIBPERF_ERR_KERNEL_NOT_SUPPORT = 1016
    LIBPERF_ERR_INVALID_METRIC_TYPE = 1017
    LIBPERF_ERR_INVALID_PID = 1018
    LIBPERF_ERR_INVALID_TASK_TYPE = 1019
    LIBPERF_ERR_INVALID_TIME = 1020
    LIBPERF_ERR_NO_PROC = 1021
    LIBPERF_ERR_TOO_MANY_FD = 1022
    LIBPERF_ERR_RAISE_FD = 1023
    LIBPERF_ERR_INVALID_PMU_DATA = 1024
    LIBPERF_ERR_FAILED_PMU_ENABLE = 1025
    LIBPERF_ERR_FAILED_PMU_DISABLE = 1026
    LIBPERF_ERR_FAILED_PMU_RESET = 1027
    LIBPERF_ERR_NOT_OPENED = 1028
    LIBPERF_ERR_QUERY_EVENT_TYPE_INVALID = 1029
    LIBPERF_ERR_QUERY_EVENT_LIST_FAILED = 1030
    LIBPERF_ERR_PATH_INACCESSIBLE = 1031
    LIBPERF_ERR_INVALID_SAMPLE_RATE = 1032

    # kperf-bpf additions
    LIBPERF_ERR_INVALID_SYSCALL = 2000
    LIBPERF_ERR_NO_BTF = 2001
    LIBPERF_ERR_BPF_LOAD = 2002
    LIBPERF_ERR_BPF_ATTACH = 2003
    LIBPERF_ERR_INVALID_ATTR = 2004
    LIBPERF_ERR_INVALID_CGROUP = 2005
    LIBPERF_ERR_PMU_NOT_PRESENT = 2006
    LIBPERF_ERR_INVALID_FIELD = 2007
    LIBPERF_ERR_BUFFER_TOO_SMALL = 2008
    LIBPERF_ERR_INVALID_FORMAT = 2009
    LIBPERF_ERR_NO_TRACEFS = 2010
    LIBPERF_ERR_INVALID_ID = 2011
    LIBPERF_ERR_IO = 2012
    LIBPERF_ERR_INVALID_ARG = 2013
    LIBPERF_ERR_NOT_ENABLED = 2014
    LIBPERF_ERR_INVALID_BDF = 2015

    UNKNOWN_ERROR = 9999

    # warnings (GetWarn); their numbers overlap the error codes, as in libkperf
    LIBPERF_WARN_CTXID_LOST = 1000
    LIBPERF_WARN_FAIL_GET_PROC = 1001
    LIBPERF_WARN_RECORDS_DROPPED = 2100
    LIBPERF_WARN_FALLBACK = 2101
    LIBPERF_WARN_SUMMARY_FULL = 2102
    LIBPERF_WARN_PROC_EXITED = 2103
    LIBPERF_WARN_SYM_INCOMPLETE = 2104


class KperfError(RuntimeError):
    """A kperf-bpf failure, with the library's code (Error.*) and message."""

    def __init__(self, errno: int, message: str):
        super().__init__(f"[{errno}] {message}")
        self.errno = errno
        self.message = message


class DataFreedError(KperfError):
    """Data used after its free() (or after the garbage collector freed it)."""

    def __init__(self, what: str):
        super().__init__(
            Error.LIBPERF_ERR_INVALID_PMU_DATA,
            f"this {what} was freed (free() was called): read what you need before freeing it",
        )


def errorno() -> int:
    """The error code of this thread's last kperf call: 0 (Error.SUCCESS) when it succeeded."""
    return _lib.state()[0]


def error() -> str:
    """The error message of this thread's last kperf call ("success" when it succeeded)."""
    code, msg = _lib.state()[:2]
    return msg if code else "success"


def get_warn() -> int:
    """The warning code of this thread's last kperf call, 0 when there was none."""
    return _lib.state()[2]


def get_warn_msg() -> str:
    """The warning message of this thread's last kperf call, "" when there was none."""
    return _lib.state()[3]


def _raise_last():
    code, msg = _lib.state()[:2]
    raise KperfError(code or Error.UNKNOWN_ERROR, msg or "unknown failure")


__all__ = ["Error", "KperfError", "DataFreedError", "errorno", "error", "get_warn", "get_warn_msg"]
