"""kperf.profiler's error: a profiling session used the wrong way (an unknown keyword, a
state that does not exist, a file that cannot be written, a pause with no session)."""

__all__ = ["ProfilerError"]


class ProfilerError(RuntimeError):
    """What the profiler refused, and why, in a sentence a user can act on; errno is the
    library's code (kperf.Error) when the refusal came from it (a source this machine
    lacks: LIBPERF_ERR_KERNEL_NOT_SUPPORT), else None."""

    def __init__(self, message, errno=None):
        super().__init__(message)
        self.errno = errno
