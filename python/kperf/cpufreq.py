"""CPU frequency sampling (libkperf's open_cpu_freq_sampling, read_cpu_freq_detail,
close_cpu_freq_sampling): a background sampler of every core's cpufreq, read as the minimum,
maximum and average frequency of each core since the previous read."""

import ctypes

from . import _cstructs as cs
from ._convert import unsigned
from .pmu import _call


class ImplPmuCpuFreqDetail:
    """One core's frequencies in Hz (struct PmuCpuFreqDetail)."""

    __slots__ = ("cpuId", "minFreq", "maxFreq", "avgFreq")

    def __init__(self, cpuId=0, minFreq=0, maxFreq=0, avgFreq=0, *args, **kw):
        if args or kw:
            raise TypeError(f"ImplPmuCpuFreqDetail() got unexpected arguments {args} {kw}")
        self.cpuId, self.minFreq, self.maxFreq, self.avgFreq = cpuId, minFreq, maxFreq, avgFreq

    def __repr__(self):
        return (
            f"<ImplPmuCpuFreqDetail cpu {self.cpuId}: min {self.minFreq} max {self.maxFreq} "
            f"avg {self.avgFreq}>"
        )

    @property
    def c_pmu_cpu_freq_detail(self):
        return cs.PmuCpuFreqDetail(self.cpuId, self.minFreq, self.maxFreq, self.avgFreq)

    @classmethod
    def from_c_pmu_cpu_freq_detail(cls, c):
        if isinstance(c, ctypes._Pointer):
            c = c.contents
        return cls(c.cpuId, c.minFreq, c.maxFreq, c.avgFreq)


class CpuFreqDetail:
    """What read_cpu_freq_detail() returns: `len` and `iter` (and len(), indexing, for).
    The C array belongs to the library and is reused by the next read, so it is copied."""

    def __init__(self, pointer=None, len=0):
        n = max(len, 0) if pointer else 0
        self._n = n
        make = ImplPmuCpuFreqDetail.from_c_pmu_cpu_freq_detail
        self._items = [make(pointer[i]) for i in range(n)]

    @property
    def len(self):
        return self._n

    @property
    def iter(self):
        return iter(self._items)

    def __len__(self):
        return self._items.__len__()

    def __iter__(self):
        return iter(self._items)

    def __getitem__(self, i):
        return self._items[i]

    def __repr__(self):
        return f"<CpuFreqDetail len={self._n}>"


def open_cpu_freq_sampling(period: int) -> int:
    """Start sampling every core's frequency every <period> ms (PmuOpenCpuFreqSampling):
    0, or -1 (kperf.error())."""
    return _call("PmuOpenCpuFreqSampling", unsigned(32)(period, "period"))


def read_cpu_freq_detail() -> CpuFreqDetail:
    """Each core's minimum, maximum and average frequency since the open or the previous read
    (PmuReadCpuFreqDetail); as libkperf's, empty (len 0) on failure, with kperf.error()."""
    n = ctypes.c_uint(0)
    p = _call("PmuReadCpuFreqDetail", ctypes.byref(n))
    return CpuFreqDetail(p, n.value if p else 0)


def close_cpu_freq_sampling() -> None:
    """Stop the frequency sampler (PmuCloseCpuFreqSampling)."""
    _call("PmuCloseCpuFreqSampling")


__all__ = [
    "CpuFreqDetail",
    "ImplPmuCpuFreqDetail",
    "open_cpu_freq_sampling",
    "read_cpu_freq_detail",
    "close_cpu_freq_sampling",
]
