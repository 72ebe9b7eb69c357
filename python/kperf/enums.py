"""The enumerations of libkperf's API (pmu.h), as IntEnum: their members are the C values,
compare equal to plain ints and can be passed wherever libkperf takes its class constants."""

import enum


class PmuTaskType(enum.IntEnum):
    """Collection modes of kperf.open()."""

    COUNTING = 0
    COUTING = 0  # the spelling of the libkperf documentation
    SAMPLING = 1
    SPE_SAMPLING = 2
    MAX_TASK_TYPE = 3


class PmuEventType(enum.IntEnum):
    """Event families of kperf.event_list()."""

    CORE_EVENT = 0
    UNCORE_EVENT = 1
    TRACE_EVENT = 2
    ALL_EVENT = 3


class PmuTraceType(enum.IntEnum):
    TRACE_SYS_CALL = 0


class SymbolMode(enum.IntEnum):
    NO_SYMBOL_RESOLVE = 0  # PmuData.stack is None
    RESOLVE_ELF = 1  # function names, no file and line
    RESOLVE_ELF_DWARF = 2  # function names, file and line
    RESOLVE_DELAY_ELF = 3  # addresses now, names at resolvePmuDataSymbol
    RESOLVE_DELAY_DWARF = 4  # addresses now, names and lines at resolvePmuDataSymbol


class SpeFilter(enum.IntFlag):
    SPE_FILTER_NONE = 0
    TS_ENABLE = 1 << 0
    PA_ENABLE = 1 << 1
    PCT_ENABLE = 1 << 2
    JITTER = 1 << 16
    BRANCH_FILTER = 1 << 32
    LOAD_FILTER = 1 << 33
    STORE_FILTER = 1 << 34
    SPE_DATA_ALL = (
        TS_ENABLE | PA_ENABLE | PCT_ENABLE | JITTER | BRANCH_FILTER | LOAD_FILTER | STORE_FILTER
    )


class SpeEventFilter(enum.IntFlag):
    SPE_EVENT_NONE = 0
    SPE_EVENT_RETIRED = 0x2
    SPE_EVENT_L1DMISS = 0x8
    SPE_EVENT_TLB_WALK = 0x20
    SPE_EVENT_MISPREDICTED = 0x80


class SpeEvent(enum.IntFlag):
    SPE_EV_EXCEPT = 1 << 0
    SPE_EV_RETIRED = 1 << 1
    SPE_EV_L1D_ACCESS = 1 << 2
    SPE_EV_L1D_REFILL = 1 << 3
    SPE_EV_TLB_ACCESS = 1 << 4
    SPE_EV_TLB_WALK = 1 << 5
    SPE_EV_NOT_TAKEN = 1 << 6
    SPE_EV_MISPRED = 1 << 7
    SPE_EV_LLC_ACCESS = 1 << 8
    SPE_EV_LLC_MISS = 1 << 9
    SPE_EV_REMOTE_ACCESS = 1 << 10
    SPE_EV_ALIGNMENT = 1 << 11
    SPE_EV_PARTIAL_PRED = 1 << 17
    SPE_EV_EMPTY_PRED = 1 << 18
    SPE_FORWARD_HAZARD = 1 << 24
    SPE_STRUCTURE_HAZARD = 1 << 25


class HitDataSource(enum.IntEnum):
    """HiSilicon data source of an SPE load (PmuDataExt.source; C enum HIP_DATA_SOURCE)."""

    HIP_PEER_CPU = 0
    HIP_PEER_CPU_HITM = 1
    HIP_L3 = 2
    HIP_L3_HITM = 3
    HIP_PEER_CLUSTER = 4
    HIP_PEER_CLUSTER_HITM = 5
    HIP_REMOTE_SOCKET = 6
    HIP_REMOTE_SOCKET_HITM = 7
    HIP_LOCAL_MEM = 8
    HIP_REMOTE_MEM = 9
    HIP_NC_DEV = 13
    HIP_L2 = 16
    HIP_L2_HITM = 17
    HIP_L1 = 18


HipDataSource = HitDataSource  # the C enum's spelling (HIP_*)


class SpeLdStOpType(enum.IntFlag):
    SPE_OP_LD = 1 << 20
    SPE_OP_ST = 1 << 21
    SPE_OP_ATOMIC = 1 << 22
    SPE_OP_EXCL = 1 << 23
    SPE_OP_AR = 1 << 24


class PmuHwMetric(enum.IntFlag):
    PMU_HWM_CPI = 1 << 0
    PMU_HWM_CACHE_MISS = 1 << 1
    PMU_HWM_L3_CACHE_MISS = 1 << 2
    PMU_HWM_L2D_CACHE_MISS = 1 << 3
    PMU_HWM_L1_DCACHE_MISS = 1 << 4
    PMU_HWM_L1_ICACHE_LOAD_MISS = 1 << 5
    PMU_HWM_DTLB_LOAD_MISS = 1 << 6
    PMU_HWM_ITLD_LOAD_MISS = 1 << 7
    PMU_HWM_BRACH_LOADS_MISS = 1 << 8


class BranchSampleFilter(enum.IntFlag):
    KPERF_NO_BRANCH_SAMPLE = 0
    KPERF_SAMPLE_BRANCH_USER = 1 << 0
    KPERF_SAMPLE_BRANCH_KERNEL = 1 << 1
    KPERF_SAMPLE_BRANCH_HV = 1 << 2
    KPERF_SAMPLE_BRANCH_ANY = 1 << 3
    KPERF_SAMPLE_BRANCH_ANY_CALL = 1 << 4
    KPERF_SAMPLE_BRANCH_ANY_RETURN = 1 << 5
    KPERF_SAMPLE_BRANCH_IND_CALL = 1 << 6
    KPERF_SAMPLE_BRANCH_ABORT_TX = 1 << 7
    KPERF_SAMPLE_BRANCH_IN_TX = 1 << 8
    KPERF_SAMPLE_BRANCH_NO_TX = 1 << 9
    KPERF_SAMPLE_BRANCH_COND = 1 << 10
    KPERF_SAMPLE_BRANCH_CALL_STACK = 1 << 11
    KPERF_SAMPLE_BRANCH_IND_JUMP = 1 << 12
    KPERF_SAMPLE_BRANCH_CALL = 1 << 13
    KPERF_SAMPLE_BRANCH_NO_FLAGES = 1 << 14
    KPERF_SAMPLE_BRANCH_NO_CYCLES = 1 << 15
    KPERF_SAMPLE_BRANCH_TYPE_SAVE = 1 << 16


class PmuDeviceMetric(enum.IntEnum):
    PMU_DDR_READ_BW = 0  # per channel, bytes
    PMU_DDR_WRITE_BW = 1  # per channel, bytes
    PMU_L3_TRAFFIC = 2  # per core, bytes
    PMU_L3_MISS = 3  # per core, count
    PMU_L3_REF = 4  # per core, count
    PMU_L3_LAT = 5  # per cluster / numa node, cycles
    PMU_PCIE_RX_MRD_BW = 6  # per bdf, bytes/ns
    PMU_PCIE_RX_MWR_BW = 7
    PMU_PCIE_TX_MRD_BW = 8
    PMU_PCIE_TX_MWR_BW = 9
    PMU_PCIE_RX_MRD_LAT = 10  # per bdf, ns
    PMU_PCIE_RX_MWR_LAT = 11
    PMU_PCIE_TX_MRD_LAT = 12
    PMU_SMMU_TRAN = 13  # per bdf, count
    PMU_HHA_CROSS_NUMA = 14
    PMU_HHA_CROSS_SOCKET = 15


class PmuBdfType(enum.IntEnum):
    PMU_BDF_TYPE_PCIE = 0
    PMU_BDF_TYPE_SMMU = 1


class PmuMetricMode(enum.IntEnum):
    PMU_METRIC_INVALID = 0
    PMU_METRIC_CORE = 1
    PMU_METRIC_NUMA = 2
    PMU_METRIC_CLUSTER = 3
    PMU_METRIC_BDF = 4
    PMU_METRIC_CHANNEL = 5


__all__ = [
    "PmuTaskType",
    "PmuEventType",
    "PmuTraceType",
    "SymbolMode",
    "SpeFilter",
    "SpeEventFilter",
    "SpeEvent",
    "HitDataSource",
    "HipDataSource",
    "SpeLdStOpType",
    "PmuHwMetric",
    "BranchSampleFilter",
    "PmuDeviceMetric",
    "PmuBdfType",
    "PmuMetricMode",
]
