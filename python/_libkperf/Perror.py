"""libkperf's _libkperf.Perror: the error and warning of this thread's last call."""

import kperf

from .Config import UTF_8, sym_so  # noqa: F401 (names of libkperf's module)


def Perrorno():
    """int Perrorno(): the code of the last call's error, 0 when it succeeded."""
    return kperf.errorno()


def Perror():
    """const char *Perror(): the message of the last call's error."""
    return kperf.error()


def GetWarn():
    """int GetWarn(): the code of the last call's warning, 0 when there was none."""
    return kperf.get_warn()


def GetWarnMsg():
    """const char *GetWarnMsg(): the message of the last call's warning."""
    return kperf.get_warn_msg()


__all__ = ["Perrorno", "Perror", "GetWarn", "GetWarnMsg"]
