"""Every failure a user can cause through Python: -1 (or len == -1, or KperfError for the
kperf-bpf additions), a specific kperf.errorno() and a kperf.error() that names the culprit.
Mistakes that are Python type errors (a str where a list is expected) raise at once."""

import os
import threading

import kperf
import pytest
from conftest import free_pid, requires

E = kperf.Error
T = kperf.PmuTraceType.TRACE_SYS_CALL


def trace_open_fails(code, *words, **attr):
    pd = kperf.trace_open(T, kperf.PmuTraceAttr(**attr))
    if pd > 0:
        kperf.trace_close(pd)
    assert pd == -1, f"trace_open({attr}) should fail"
    assert kperf.errorno() == code, kperf.error()
    msg = kperf.error()
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    return msg


def test_codes_match_pcerrc_h():
    import re

    from conftest import REPO

    text = open(os.path.join(REPO, "include", "kperf", "pcerrc.h")).read()
    defs = dict(re.findall(r"#define\s+(\w+)\s+(\d+)", text))
    assert len(defs) > 70
    for name, value in defs.items():
        assert getattr(E, name) == int(value), name


@requires("PmuTraceOpen")
class TestTraceOpen:
    def test_unknown_syscall(self):
        trace_open_fails(E.LIBPERF_ERR_INVALID_SYSCALL_FUN, "nosuchcall", funcs=["nosuchcall"])
        assert E.LIBPERF_ERR_INVALID_SYSCALL_FUN == 1039

    def test_unknown_syscall_suggests(self):
        trace_open_fails(1039, "'reed'", "read", funcs=["getpid", "reed"])

    def test_nonexistent_pid(self):
        pid = free_pid()
        trace_open_fails(E.LIBPERF_ERR_INVALID_PIDLIST, str(pid), pidList=[pid])
        assert E.LIBPERF_ERR_INVALID_PIDLIST == 1004

    def test_negative_pid(self):
        trace_open_fails(1004, "-5", pidList=[-5])

    def test_cpu_out_of_range(self):
        cpu = os.cpu_count() + 100
        trace_open_fails(E.LIBPERF_ERR_INVALID_CPULIST, str(cpu), cpuList=[cpu])
        trace_open_fails(1003, "-2", cpuList=[-2])
        assert E.LIBPERF_ERR_INVALID_CPULIST == 1003

    def test_attribute_out_of_range(self):
        trace_open_fails(E.KPERF_ERR_INVALID_ATTR, "ringBufferKb", ringBufferKb=1 << 30)
        trace_open_fails(2004, "summaryEntries", summaryEntries=1 << 30)
        trace_open_fails(2004, "fromExec", fromExec=True)

    def test_bad_cgroup(self):
        trace_open_fails(E.LIBPERF_ERR_OPEN_INVALID_FILE, "/nonexistent", cgroupPath="/nonexistent")
        trace_open_fails(1069, "/proc", "cgroup v2", cgroupPath="/proc")

    def test_unknown_trace_type(self):
        assert kperf.trace_open(7, kperf.PmuTraceAttr()) == -1
        assert kperf.errorno() == E.LIBPERF_ERR_INVALID_TRACE_TYPE == 1038
        assert "7" in kperf.error()

    def test_invalid_handle(self):
        for f in (kperf.trace_enable, kperf.trace_disable):
            assert f(4242) == -1
            assert kperf.errorno() == E.LIBPERF_ERR_INVALID_PD == 1006
            assert "4242" in kperf.error()
        data = kperf.trace_read(4242)
        assert data.len == -1 and list(data) == [] and kperf.errorno() == 1006
        kperf.trace_close(4242)  # nothing to close: no crash
        for f in (kperf.trace_read_summary, kperf.trace_stats):
            with pytest.raises(kperf.KperfError) as e:
                f(4242)
            assert e.value.errno == 1006 and "4242" in e.value.message

    def test_handle_that_is_not_an_int(self):
        for bad in ("1", 1.0, None, 2**40):
            assert kperf.trace_enable(bad) == -1
            assert kperf.errorno() == 1006
            assert kperf.trace_read(bad).len == -1

    def test_success_clears_the_error(self):
        assert kperf.trace_enable(4242) == -1 and kperf.errorno() == 1006
        assert "getppid" in kperf.sys_call_func_list()
        assert kperf.errorno() == 0 and kperf.error() == "success"

    def test_error_state_is_per_thread(self):
        assert kperf.trace_enable(4242) == -1
        seen = {}

        def other():
            seen["before"] = kperf.errorno()
            kperf.trace_open(T, kperf.PmuTraceAttr(funcs=["nosuchcall"]))
            seen["after"] = (kperf.errorno(), kperf.error())

        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert seen["before"] == 0
        assert seen["after"][0] == 1039 and "nosuchcall" in seen["after"][1]
        assert kperf.errorno() == 1006 and "4242" in kperf.error()

    def test_garbage_collected_data_does_not_clear_the_error(self):
        data = kperf.trace_read(4242)
        assert kperf.errorno() == 1006
        del data
        import gc

        gc.collect()
        assert kperf.errorno() == 1006 and "4242" in kperf.error()


def test_syscall_number_unknown():
    assert kperf.syscall_number("nosuchcall") == -1
    assert kperf.errorno() == 1039 and "nosuchcall" in kperf.error()


class TestPythonArguments:
    def test_lists_must_be_lists(self):
        with pytest.raises(TypeError, match="evtList must be a list"):
            kperf.PmuAttr(evtList="cycles")
        with pytest.raises(TypeError, match="funcs must be a list"):
            kperf.PmuTraceAttr(funcs="read")
        with pytest.raises(TypeError, match="funcs entry must be a str"):
            kperf.PmuTraceAttr(funcs=[1])
        with pytest.raises(TypeError, match="pidList entry must be an int"):
            kperf.PmuTraceAttr(pidList=["12"])

    def test_values_out_of_c_range(self):
        with pytest.raises(ValueError, match="out of range"):
            kperf.PmuTraceAttr(pidList=[2**40])
        with pytest.raises(ValueError, match="sampleRate"):
            kperf.PmuAttr(sampleRate=-1)
        with pytest.raises(ValueError, match="minDurationNs"):
            kperf.PmuTraceAttr(minDurationNs=-1)
        with pytest.raises(ValueError, match="NUL"):
            kperf.PmuTraceAttr(funcs=["re\0ad"])

    def test_unknown_keyword(self):
        with pytest.raises(TypeError, match="sampleRat"):
            kperf.PmuAttr(sampleRat=10)
        with pytest.raises(AttributeError):
            kperf.PmuTraceAttr().func = ["read"]

    def test_attr_needs_the_right_class(self):
        with pytest.raises(TypeError, match="PmuTraceAttr"):
            kperf.trace_open(T, {"funcs": ["read"]})
        with pytest.raises(TypeError, match="PmuAttr"):
            kperf.open(kperf.PmuTaskType.COUNTING, kperf.PmuTraceAttr())

    def test_evt_attr_may_not_outnumber_evt_list(self):
        attr = kperf.PmuAttr(evtList=["cpu-clock"], evtAttr=[1, 2])
        assert kperf.open(kperf.PmuTaskType.COUNTING, attr) == -1
        assert kperf.errorno() == E.LIBPERF_ERR_INVALID_EVTATTR
        assert "numEvtAttr (2) is larger than numEvt (1)" in kperf.error()

    def test_get_field_needs_a_sized_buffer(self):
        with pytest.raises(TypeError, match="record of kperf.read"):
            kperf.get_field(object(), "prev_pid", kperf.pmu.ctypes.c_uint())

    def test_topology_ids_must_be_unsigned(self):
        assert kperf.get_cpu_freq(-1) == -1
        assert kperf.errorno() == E.LIBPERF_ERR_CPUFREQ_NOT_CONFIG and "-1" in kperf.error()
        assert kperf.get_numa_core(-1) == []
        assert kperf.errorno() == E.LIBPERF_ERR_KERNEL_NOT_SUPPORT
        assert kperf.get_cluster_core(-3) == [] and "-3" in kperf.error()
        assert kperf.errorno() == E.LIBPERF_ERR_CLUSTER_ID_OVERSIZE
