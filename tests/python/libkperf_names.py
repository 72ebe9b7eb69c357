"""libkperf's public Python names at its head (public repository openeuler-mirror/libkperf,
python/modules: the kperf package with kperf.pmu, kperf.perror and kperf.trace_pointer, the
ksym package, and the _libkperf layer its tests and users reach into), recorded as facts for
test_libkperf_names.py: every module's names by kind, every function's and constructor's
parameters with their defaults (as inspect renders them), every class's public attributes, and
every constant's value. Helper imports of those modules (ctypes, os, typing) are left out.

Keys are "module:name". Names are facts: this file holds no code of libkperf's.
"""

# fmt: off
NAMES = {
    "kperf": {
        "class": (
            "BranchSampleFilter CpuFreqDetail CpuTopology Error EvtAttr HitDataSource ImplPmuData "
            "ImplPmuDeviceData ImplPmuTraceData PmuAttr PmuBdfType PmuData PmuDataExt "
            "PmuDeviceAttr PmuDeviceData PmuDeviceMetric PmuEventType PmuHwMetric PmuHwMetricAttr "
            "PmuMetricMode PmuTaskType PmuTraceAttr PmuTraceData PmuTraceType PointerEvt "
            "SampleRawField SpeEvent SpeEventFilter SpeFilter SymbolMode UTraceAttr UTraceData "
            "UTraceDataList"
        ),
        "function": (
            "begin_write close close_cpu_freq_sampling device_bdf_list device_open disable dump "
            "enable end_write error errorno event_list exit get_cluster_core get_cpu_freq "
            "get_device_metric get_field get_field_exp get_numa_core get_warn get_warn_msg open "
            "open_cpu_freq_sampling pmu_open_with_hw_metric read read_cpu_freq_detail "
            "resolvePmuDataSymbol stop sys_call_func_list trace_close trace_disable trace_enable "
            "trace_open trace_read u_trace_close u_trace_disable u_trace_enable u_trace_open "
            "u_trace_read write_data"
        ),
        "module": (
            "perror pmu trace_pointer"
        ),
    },
    "kperf.pmu": {
        "class": (
            "BranchSampleFilter CpuFreqDetail CpuTopology EvtAttr HitDataSource ImplPmuData "
            "ImplPmuDeviceData ImplPmuTraceData PmuAttr PmuBdfType PmuData PmuDataExt "
            "PmuDeviceAttr PmuDeviceData PmuDeviceMetric PmuEventType PmuHwMetric PmuHwMetricAttr "
            "PmuMetricMode PmuTaskType PmuTraceAttr PmuTraceData PmuTraceType SampleRawField "
            "SpeEvent SpeEventFilter SpeFilter SymbolMode UTraceAttr UTraceData UTraceDataList"
        ),
        "function": (
            "begin_write close close_cpu_freq_sampling device_bdf_list device_open disable dump "
            "enable end_write event_list exit get_cluster_core get_cpu_freq get_device_metric "
            "get_field get_field_exp get_numa_core open open_cpu_freq_sampling "
            "pmu_open_with_hw_metric read read_cpu_freq_detail resolvePmuDataSymbol stop "
            "sys_call_func_list trace_close trace_disable trace_enable trace_open trace_read "
            "u_trace_close u_trace_disable u_trace_enable u_trace_open u_trace_read write_data"
        ),
    },
    "kperf.perror": {
        "class": (
            "Error"
        ),
        "function": (
            "error errorno get_warn get_warn_msg"
        ),
    },
    "kperf.trace_pointer": {
        "class": (
            "NetApiGroReceiveEntry NetNetifRx PointerCommData PointerEvt SkebSkbCopyDatagramIovec"
        ),
    },
    "ksym": {
        "class": (
            "Stack Symbol"
        ),
        "function": (
            "destroy free_module get_stack get_symbol record_kernel record_module"
        ),
        "module": (
            "symbol"
        ),
    },
    "ksym.symbol": {
        "class": (
            "Stack Symbol"
        ),
        "function": (
            "destroy free_module get_stack get_symbol record_kernel record_module"
        ),
    },
    "_libkperf": {
        "class": (
            "AsmCode CpuTopology CtypesAsmCode CtypesEvtAttr CtypesPmuAttr CtypesPmuData "
            "CtypesPmuTraceAttr CtypesPmuTraceData CtypesStack CtypesStackAsm CtypesSymbol "
            "CtypesSymbolSource CtypesUTraceAttr CtypesUTraceData EvtAttr ImplPmuData "
            "ImplPmuDeviceData ImplPmuTraceData PmuAttr PmuCpuFreqDetail PmuData PmuDataExt "
            "PmuDeviceAttr PmuDeviceData PmuHwMetricAttr PmuTraceAttr PmuTraceData SampleRawData "
            "SampleRawField Stack StackAsm Symbol UTraceAttr UTraceData UTraceDataList"
        ),
        "function": (
            "FreeModuleData GetWarn GetWarnMsg Perror Perrorno PmuAppendData PmuBeginWrite "
            "PmuClose PmuCloseCpuFreqSampling PmuDeviceBdfList PmuDeviceBdfListFree PmuDeviceOpen "
            "PmuDisable PmuDumpData PmuEnable PmuEndWrite PmuEventList PmuExit PmuGetClusterCore "
            "PmuGetCpuFreq PmuGetDevMetric PmuGetField PmuGetFieldExp PmuGetNumaCore PmuOpen "
            "PmuOpenCpuFreqSampling PmuOpenWithHWMetric PmuRead PmuReadCpuFreqDetail PmuStop "
            "PmuSysCallFuncList PmuSysCallFuncListFree PmuTraceClose PmuTraceDataFree "
            "PmuTraceDisable PmuTraceEnable PmuTraceOpen PmuTraceRead PmuWriteData "
            "ResolvePmuDataSymbol StackToHash SymResolverDestroy SymResolverMapAddr "
            "SymResolverRecordKernel SymResolverRecordModule SymResolverRecordModuleNoDwarf "
            "UTraceClose UTraceDataFree UTraceDisable UTraceEnable UTraceOpen UTraceRead"
        ),
        "module": (
            "Config Pmu"
        ),
        "value": (
            "UTF_8 VERSION kperf_so sym_so"
        ),
    },
    "_libkperf.Config": {
        "function": (
            "lib_path libkperf_path libsym_path"
        ),
        "value": (
            "UTF_8 VERSION VERSION_BUGFIX VERSION_MAJOR VERSION_MINOR VERSION_SUFFIX kperf_so "
            "sym_so"
        ),
    },
    "_libkperf.Perror": {
        "function": (
            "GetWarn GetWarnMsg Perror Perrorno"
        ),
        "value": (
            "UTF_8 sym_so"
        ),
    },
    "_libkperf.Pmu": {
        "class": (
            "BranchRecords CpuTopology CtypesBranchRecords CtypesCpuTopology CtypesEvtAttr "
            "CtypesPmuAttr CtypesPmuCpuFreqDetail CtypesPmuData CtypesPmuDataExt "
            "CtypesPmuDeviceAttr CtypesPmuDeviceData CtypesPmuHwMetricAttr CtypesPmuTraceAttr "
            "CtypesPmuTraceData CtypesSampleRawData CtypesSampleRawField CtypesStack "
            "CtypesSymbolSource CtypesUTraceAttr CtypesUTraceData CytpesBranchSampleRecord "
            "CytpesSpeDataExt DdrDataStructure EvtAttr ImplBranchRecords ImplPmuCpuFreqDetail "
            "ImplPmuData ImplPmuDeviceData ImplPmuTraceData PmuAttr PmuCpuFreqDetail PmuData "
            "PmuDataExt PmuDataExtUnion PmuDeviceAttr PmuDeviceData PmuHwMetricAttr PmuTraceAttr "
            "PmuTraceData SampleRateUnion SampleRawData SampleRawField Stack UTraceAttr "
            "UTraceData UTraceDataList"
        ),
        "function": (
            "DevDataFree PmuAppendData PmuBeginWrite PmuClose PmuCloseCpuFreqSampling PmuCollect "
            "PmuDataFree PmuDeviceBdfList PmuDeviceBdfListFree PmuDeviceOpen PmuDisable "
            "PmuDumpData PmuEnable PmuEndWrite PmuEventList PmuEventListFree PmuExit "
            "PmuGetClusterCore PmuGetCpuFreq PmuGetDevMetric PmuGetField PmuGetFieldExp "
            "PmuGetNumaCore PmuOpen PmuOpenCpuFreqSampling PmuOpenWithHWMetric PmuRead "
            "PmuReadCpuFreqDetail PmuStop PmuSysCallFuncList PmuSysCallFuncListFree PmuTraceClose "
            "PmuTraceDataFree PmuTraceDisable PmuTraceEnable PmuTraceOpen PmuTraceRead "
            "PmuWriteData ResolvePmuDataSymbol UTraceClose UTraceDataFree UTraceDisable "
            "UTraceEnable UTraceOpen UTraceRead"
        ),
        "value": (
            "UTF_8 kperf_so"
        ),
    },
    "_libkperf.Symbol": {
        "class": (
            "AsmCode CtypesAsmCode CtypesStack CtypesStackAsm CtypesSymbol Stack StackAsm Symbol"
        ),
        "function": (
            "FreeModuleData StackToHash SymResolverDestroy SymResolverMapAddr "
            "SymResolverRecordKernel SymResolverRecordModule SymResolverRecordModuleNoDwarf"
        ),
        "value": (
            "UTF_8 sym_so"
        ),
    },
}

SIGNATURES = {
    "kperf:CpuFreqDetail": "pointer=None, len=0",
    "kperf:CpuTopology": "coreId=0, numaId=0, socketId=0",
    "kperf:EvtAttr": "groupId=0, period=0, excludeUser=False, excludeKernel=False",
    "kperf:ImplPmuData": (
        "stack=None, evt='', ts=0, pid=0, tid=0, cpu=0, groupId=0, cpuTopo=None, comm='', "
        "period=0, count=0, countPercent=0.0, ext=None, rawData=None, cgroupName=''"
    ),
    "kperf:ImplPmuDeviceData": "metric=0, count=0, mode=0",
    "kperf:ImplPmuTraceData": (
        "funcs='', startTs=0, elapsedTime=0.0, pid=0, tid=0, cpu=0, comm='', stack=None, *args, "
        "**kw"
    ),
    "kperf:PmuAttr": (
        "evtList=None, pidList=None, cpuList=None, evtAttr=None, sampleRate=0, useFreq=False, "
        "excludeUser=False, excludeKernel=False, excludeGuest=False, excludeHost=False, "
        "symbolMode=0, callStack=False, blockedSample=False, dataFilter=0, evFilter=0, "
        "minLatency=0, includeNewFork=False, branchSampleFilter=0, cgroupNameList=None, "
        "enableUserAccess=False, enableBpf=False, enableOnExec=False, perThread=False"
    ),
    "kperf:PmuData": "pointer=None, len=0",
    "kperf:PmuDeviceAttr": "metric, bdf=None, port=None",
    "kperf:PmuDeviceData": "pointer=None, len=0",
    "kperf:PmuHwMetricAttr": "metric, basePeriodList=None, thresholdList=None, pid=0",
    "kperf:PmuTraceAttr": "funcs=None, pidList=None, cpuList=None, callStack=False, symbolMode=0",
    "kperf:PmuTraceData": "pointer=None, len=0",
    "kperf:SampleRawField": "field_name='', field_str='', offset=0, size=0, is_signed=0",
    "kperf:UTraceAttr": "symSrc=None, pidList=None, fetchG=0",
    "kperf:UTraceData": (
        "addr=0, comm='', tid=0, cpu=0, timestamp=0, gPtr=0, module='', func='', isRet=0, *args, "
        "**kw"
    ),
    "kperf:UTraceDataList": "pointer=None, len=0",
    "kperf:begin_write": "path, pattr, addIdHdr",
    "kperf:close": "pd",
    "kperf:device_bdf_list": "bdf_type",
    "kperf:device_open": "device_attr",
    "kperf:disable": "pd",
    "kperf:dump": "pmuData, filepath, dump_dwf",
    "kperf:enable": "pd",
    "kperf:end_write": "file",
    "kperf:event_list": "event_type",
    "kperf:exit": "pd",
    "kperf:get_cluster_core": "clusterId",
    "kperf:get_cpu_freq": "core",
    "kperf:get_device_metric": "pmu_data, device_attr",
    "kperf:get_field": "pmu_data, field_name, value",
    "kperf:get_field_exp": "pmu_data, field_name",
    "kperf:get_numa_core": "numaId",
    "kperf:open": "collect_type, pmu_attr",
    "kperf:open_cpu_freq_sampling": "period",
    "kperf:pmu_open_with_hw_metric": "pmu_hw_metric_attr",
    "kperf:read": "pd",
    "kperf:resolvePmuDataSymbol": "pmuData",
    "kperf:stop": "pd",
    "kperf:trace_close": "pd",
    "kperf:trace_disable": "pd",
    "kperf:trace_enable": "pd",
    "kperf:trace_open": "trace_type, pmu_trace_attr",
    "kperf:trace_read": "pd",
    "kperf:u_trace_close": "pd",
    "kperf:u_trace_disable": "pd",
    "kperf:u_trace_enable": "pd",
    "kperf:u_trace_open": "trace_attr",
    "kperf:u_trace_read": "pd",
    "kperf:write_data": "file, data",
    "kperf.pmu:CpuFreqDetail": "pointer=None, len=0",
    "kperf.pmu:CpuTopology": "coreId=0, numaId=0, socketId=0",
    "kperf.pmu:EvtAttr": "groupId=0, period=0, excludeUser=False, excludeKernel=False",
    "kperf.pmu:ImplPmuData": (
        "stack=None, evt='', ts=0, pid=0, tid=0, cpu=0, groupId=0, cpuTopo=None, comm='', "
        "period=0, count=0, countPercent=0.0, ext=None, rawData=None, cgroupName=''"
    ),
    "kperf.pmu:ImplPmuDeviceData": "metric=0, count=0, mode=0",
    "kperf.pmu:ImplPmuTraceData": (
        "funcs='', startTs=0, elapsedTime=0.0, pid=0, tid=0, cpu=0, comm='', stack=None, *args, "
        "**kw"
    ),
    "kperf.pmu:PmuAttr": (
        "evtList=None, pidList=None, cpuList=None, evtAttr=None, sampleRate=0, useFreq=False, "
        "excludeUser=False, excludeKernel=False, excludeGuest=False, excludeHost=False, "
        "symbolMode=0, callStack=False, blockedSample=False, dataFilter=0, evFilter=0, "
        "minLatency=0, includeNewFork=False, branchSampleFilter=0, cgroupNameList=None, "
        "enableUserAccess=False, enableBpf=False, enableOnExec=False, perThread=False"
    ),
    "kperf.pmu:PmuData": "pointer=None, len=0",
    "kperf.pmu:PmuDeviceAttr": "metric, bdf=None, port=None",
    "kperf.pmu:PmuDeviceData": "pointer=None, len=0",
    "kperf.pmu:PmuHwMetricAttr": "metric, basePeriodList=None, thresholdList=None, pid=0",
    "kperf.pmu:PmuTraceAttr": (
        "funcs=None, pidList=None, cpuList=None, callStack=False, symbolMode=0"
    ),
    "kperf.pmu:PmuTraceData": "pointer=None, len=0",
    "kperf.pmu:SampleRawField": "field_name='', field_str='', offset=0, size=0, is_signed=0",
    "kperf.pmu:UTraceAttr": "symSrc=None, pidList=None, fetchG=0",
    "kperf.pmu:UTraceData": (
        "addr=0, comm='', tid=0, cpu=0, timestamp=0, gPtr=0, module='', func='', isRet=0, *args, "
        "**kw"
    ),
    "kperf.pmu:UTraceDataList": "pointer=None, len=0",
    "kperf.pmu:begin_write": "path, pattr, addIdHdr",
    "kperf.pmu:close": "pd",
    "kperf.pmu:device_bdf_list": "bdf_type",
    "kperf.pmu:device_open": "device_attr",
    "kperf.pmu:disable": "pd",
    "kperf.pmu:dump": "pmuData, filepath, dump_dwf",
    "kperf.pmu:enable": "pd",
    "kperf.pmu:end_write": "file",
    "kperf.pmu:event_list": "event_type",
    "kperf.pmu:exit": "pd",
    "kperf.pmu:get_cluster_core": "clusterId",
    "kperf.pmu:get_cpu_freq": "core",
    "kperf.pmu:get_device_metric": "pmu_data, device_attr",
    "kperf.pmu:get_field": "pmu_data, field_name, value",
    "kperf.pmu:get_field_exp": "pmu_data, field_name",
    "kperf.pmu:get_numa_core": "numaId",
    "kperf.pmu:open": "collect_type, pmu_attr",
    "kperf.pmu:open_cpu_freq_sampling": "period",
    "kperf.pmu:pmu_open_with_hw_metric": "pmu_hw_metric_attr",
    "kperf.pmu:read": "pd",
    "kperf.pmu:resolvePmuDataSymbol": "pmuData",
    "kperf.pmu:stop": "pd",
    "kperf.pmu:trace_close": "pd",
    "kperf.pmu:trace_disable": "pd",
    "kperf.pmu:trace_enable": "pd",
    "kperf.pmu:trace_open": "trace_type, pmu_trace_attr",
    "kperf.pmu:trace_read": "pd",
    "kperf.pmu:u_trace_close": "pd",
    "kperf.pmu:u_trace_disable": "pd",
    "kperf.pmu:u_trace_enable": "pd",
    "kperf.pmu:u_trace_open": "trace_attr",
    "kperf.pmu:u_trace_read": "pd",
    "kperf.pmu:write_data": "file, data",
    "ksym:Stack": "symbol=None, next=None, prev=None",
    "ksym:Symbol": (
        "addr=0, module='', symbolName='', fileName='', lineNum=0, offset=0, codeMapEndAddr=0, "
        "codeMapAddr=0, firstLine=0, mntPoint=''"
    ),
    "ksym:free_module": "pid",
    "ksym:get_stack": "pid, stacks",
    "ksym:get_symbol": "pid, addr",
    "ksym:record_module": "pid, dwarf=True",
    "ksym.symbol:Stack": "symbol=None, next=None, prev=None",
    "ksym.symbol:Symbol": (
        "addr=0, module='', symbolName='', fileName='', lineNum=0, offset=0, codeMapEndAddr=0, "
        "codeMapAddr=0, firstLine=0, mntPoint=''"
    ),
    "ksym.symbol:free_module": "pid",
    "ksym.symbol:get_stack": "pid, stacks",
    "ksym.symbol:get_symbol": "pid, addr",
    "ksym.symbol:record_module": "pid, dwarf=True",
    "_libkperf:AsmCode": "addr=0, code='', fileName='', lineNum=0",
    "_libkperf:CpuTopology": "coreId=0, numaId=0, socketId=0",
    "_libkperf:CtypesAsmCode": "addr=0, code='', fileName='', lineNum=0, *args, **kw",
    "_libkperf:CtypesEvtAttr": (
        "groupId=0, period=0, excludeUser=False, excludeKernel=False, *args, **kw"
    ),
    "_libkperf:CtypesPmuAttr": (
        "evtList=None, pidList=None, cpuList=None, evtAttr=None, sampleRate=0, useFreq=False, "
        "excludeUser=False, excludeKernel=False, excludeGuest=False, excludeHost=False, "
        "symbolMode=0, callStack=False, blockedSample=False, dataFilter=0, evFilter=0, "
        "minLatency=0, includeNewFork=False, branchSampleFilter=0, cgroupNameList=None, "
        "numCgroup=0, enableUserAccess=False, enableBpf=False, enableHwMetric=False, "
        "enableOnExec=False, perThread=False, *args, **kw"
    ),
    "_libkperf:CtypesPmuData": (
        "stack=None, evt='', ts=0, pid=0, tid=0, cpu=0, groupId=0, cpuTopo=None, comm='', "
        "period=0, count=0, countPercent=0.0, ext=None, rawData=None, cgroupName='', *args, **kw"
    ),
    "_libkperf:CtypesPmuTraceAttr": (
        "funcs=None, pidList=None, cpuList=None, callStack=False, symbolMode=0, *args, **kw"
    ),
    "_libkperf:CtypesPmuTraceData": (
        "funcs='', startTs=0, elapsedTime=0.0, pid=0, tid=0, cpu=0, comm='', stack=None, *args, "
        "**kw"
    ),
    "_libkperf:CtypesStackAsm": (
        "fileName='', funcStartAddr=0, functFileOffset=0, next=None, asmCode=None, *args, **kw"
    ),
    "_libkperf:CtypesSymbol": (
        "addr=0, module='', symbolName='', mangleName='', fileName='', lineNum=0, offset=0, "
        "codeMapEndAddr=0, codeMapAddr=0, firstLine=0, mntPoint='', *args, **kw"
    ),
    "_libkperf:CtypesSymbolSource": "moduleName='', symbolName='', *args, **kw",
    "_libkperf:CtypesUTraceAttr": "symSrc=None, pidList=None, cpuList=None, fetchG=0, *args, **kw",
    "_libkperf:CtypesUTraceData": (
        "addr=0, comm='', tid=0, cpu=0, timestamp=0, gPtr=0, module='', func='', isRet=0, *args, "
        "**kw"
    ),
    "_libkperf:EvtAttr": "groupId=0, period=0, excludeUser=False, excludeKernel=False",
    "_libkperf:FreeModuleData": "pid",
    "_libkperf:ImplPmuData": (
        "stack=None, evt='', ts=0, pid=0, tid=0, cpu=0, groupId=0, cpuTopo=None, comm='', "
        "period=0, count=0, countPercent=0.0, ext=None, rawData=None, cgroupName=''"
    ),
    "_libkperf:ImplPmuDeviceData": "metric=0, count=0, mode=0",
    "_libkperf:ImplPmuTraceData": (
        "funcs='', startTs=0, elapsedTime=0.0, pid=0, tid=0, cpu=0, comm='', stack=None, *args, "
        "**kw"
    ),
    "_libkperf:PmuAppendData": "fromData, toData",
    "_libkperf:PmuAttr": (
        "evtList=None, pidList=None, cpuList=None, evtAttr=None, sampleRate=0, useFreq=False, "
        "excludeUser=False, excludeKernel=False, excludeGuest=False, excludeHost=False, "
        "symbolMode=0, callStack=False, blockedSample=False, dataFilter=0, evFilter=0, "
        "minLatency=0, includeNewFork=False, branchSampleFilter=0, cgroupNameList=None, "
        "enableUserAccess=False, enableBpf=False, enableHwMetric=False, enableOnExec=False, "
        "perThread=False"
    ),
    "_libkperf:PmuBeginWrite": "path, pattr, addIdHdr",
    "_libkperf:PmuClose": "pd",
    "_libkperf:PmuCpuFreqDetail": "pointer=None, len=0",
    "_libkperf:PmuData": "pointer=None, len=0",
    "_libkperf:PmuDeviceAttr": "metric=0, bdf=None, port=None",
    "_libkperf:PmuDeviceBdfList": "bdf_type",
    "_libkperf:PmuDeviceData": "pointer=None, len=0",
    "_libkperf:PmuDeviceOpen": "device_attr",
    "_libkperf:PmuDisable": "pd",
    "_libkperf:PmuDumpData": "pmuData, filepath, dumpDwf",
    "_libkperf:PmuEnable": "pd",
    "_libkperf:PmuEndWrite": "file",
    "_libkperf:PmuEventList": "eventType",
    "_libkperf:PmuExit": "pd",
    "_libkperf:PmuGetClusterCore": "clusterId",
    "_libkperf:PmuGetCpuFreq": "core",
    "_libkperf:PmuGetDevMetric": "pmu_data, device_attr",
    "_libkperf:PmuGetField": "rawData, field_name, value, vSize",
    "_libkperf:PmuGetFieldExp": "rawData, field_name",
    "_libkperf:PmuGetNumaCore": "numaId",
    "_libkperf:PmuHwMetricAttr": "metric=0, basePeriodList=None, thresholdList=None, pid=0",
    "_libkperf:PmuOpen": "collectType, pmuAttr",
    "_libkperf:PmuOpenCpuFreqSampling": "period",
    "_libkperf:PmuOpenWithHWMetric": "hwMetricAttr",
    "_libkperf:PmuRead": "pd",
    "_libkperf:PmuStop": "pd",
    "_libkperf:PmuTraceAttr": (
        "funcs=None, pidList=None, cpuList=None, callStack=False, symbolMode=0"
    ),
    "_libkperf:PmuTraceClose": "pd",
    "_libkperf:PmuTraceData": "pointer=None, len=0",
    "_libkperf:PmuTraceDataFree": "pmuTraceData",
    "_libkperf:PmuTraceDisable": "pd",
    "_libkperf:PmuTraceEnable": "pd",
    "_libkperf:PmuTraceOpen": "traceType, pmuTraceAttr",
    "_libkperf:PmuTraceRead": "pd",
    "_libkperf:PmuWriteData": "file, data",
    "_libkperf:ResolvePmuDataSymbol": "pmuData",
    "_libkperf:SampleRawData": "data=''",
    "_libkperf:SampleRawField": "field_name='', field_str='', offset=0, size=0, is_signed=0",
    "_libkperf:Stack": "symbol=None, next=None, prev=None",
    "_libkperf:StackAsm": (
        "fileName='', funcStartAddr=0, functFileOffset=0, next=None, asmCode=None"
    ),
    "_libkperf:StackToHash": "pid, stackList",
    "_libkperf:SymResolverMapAddr": "pid, addr",
    "_libkperf:SymResolverRecordModule": "pid",
    "_libkperf:SymResolverRecordModuleNoDwarf": "pid",
    "_libkperf:Symbol": (
        "addr=0, module='', symbolName='', mangleName='', fileName='', lineNum=0, offset=0, "
        "codeMapEndAddr=0, codeMapAddr=0, firstLine=0, mntPoint=''"
    ),
    "_libkperf:UTraceAttr": "symSrc=None, pidList=None, cpuList=None, fetchG=0",
    "_libkperf:UTraceClose": "pd",
    "_libkperf:UTraceData": (
        "addr=0, comm='', tid=0, cpu=0, timestamp=0, gPtr=0, module='', func='', isRet=0, *args, "
        "**kw"
    ),
    "_libkperf:UTraceDataFree": "traceData",
    "_libkperf:UTraceDataList": "pointer=None, len=0",
    "_libkperf:UTraceDisable": "pd",
    "_libkperf:UTraceEnable": "pd",
    "_libkperf:UTraceOpen": "attr",
    "_libkperf:UTraceRead": "pd",
    "_libkperf.Pmu:BranchRecords": "pointer=None, nr=0",
    "_libkperf.Pmu:CpuTopology": "coreId=0, numaId=0, socketId=0",
    "_libkperf.Pmu:CtypesCpuTopology": "coreId=0, numaId=0, socketId=0, *args, **kw",
    "_libkperf.Pmu:CtypesEvtAttr": (
        "groupId=0, period=0, excludeUser=False, excludeKernel=False, *args, **kw"
    ),
    "_libkperf.Pmu:CtypesPmuAttr": (
        "evtList=None, pidList=None, cpuList=None, evtAttr=None, sampleRate=0, useFreq=False, "
        "excludeUser=False, excludeKernel=False, excludeGuest=False, excludeHost=False, "
        "symbolMode=0, callStack=False, blockedSample=False, dataFilter=0, evFilter=0, "
        "minLatency=0, includeNewFork=False, branchSampleFilter=0, cgroupNameList=None, "
        "numCgroup=0, enableUserAccess=False, enableBpf=False, enableHwMetric=False, "
        "enableOnExec=False, perThread=False, *args, **kw"
    ),
    "_libkperf.Pmu:CtypesPmuCpuFreqDetail": "cpuId=0, minFreq=0, maxFreq=0, avgFreq=0, *args, **kw",
    "_libkperf.Pmu:CtypesPmuData": (
        "stack=None, evt='', ts=0, pid=0, tid=0, cpu=0, groupId=0, cpuTopo=None, comm='', "
        "period=0, count=0, countPercent=0.0, ext=None, rawData=None, cgroupName='', *args, **kw"
    ),
    "_libkperf.Pmu:CtypesPmuDeviceAttr": "metric=0, bdf=None, port=None, *args, **kw",
    "_libkperf.Pmu:CtypesPmuHwMetricAttr": (
        "metric=0, basePeriodList=None, thresholdList=None, pid=0, *args, **kw"
    ),
    "_libkperf.Pmu:CtypesPmuTraceAttr": (
        "funcs=None, pidList=None, cpuList=None, callStack=False, symbolMode=0, *args, **kw"
    ),
    "_libkperf.Pmu:CtypesPmuTraceData": (
        "funcs='', startTs=0, elapsedTime=0.0, pid=0, tid=0, cpu=0, comm='', stack=None, *args, "
        "**kw"
    ),
    "_libkperf.Pmu:CtypesSampleRawData": "data='', *args, **kw",
    "_libkperf.Pmu:CtypesSampleRawField": (
        "field_name='', field_str='', offset=0, size=0, is_signed=0, *args, **kw"
    ),
    "_libkperf.Pmu:CtypesSymbolSource": "moduleName='', symbolName='', *args, **kw",
    "_libkperf.Pmu:CtypesUTraceAttr": (
        "symSrc=None, pidList=None, cpuList=None, fetchG=0, *args, **kw"
    ),
    "_libkperf.Pmu:CtypesUTraceData": (
        "addr=0, comm='', tid=0, cpu=0, timestamp=0, gPtr=0, module='', func='', isRet=0, *args, "
        "**kw"
    ),
    "_libkperf.Pmu:CytpesSpeDataExt": "pa=0, va=0, event=0, lat=0, source=0, *args, **kw",
    "_libkperf.Pmu:DevDataFree": "dev_data",
    "_libkperf.Pmu:EvtAttr": "groupId=0, period=0, excludeUser=False, excludeKernel=False",
    "_libkperf.Pmu:ImplBranchRecords": "fromAddr=0, toAddr=0, cycles=0, misPred=0, predicted=0",
    "_libkperf.Pmu:ImplPmuCpuFreqDetail": "cpuId=0, minFreq=0, maxFreq=0, avgFreq=0, *args, **kw",
    "_libkperf.Pmu:ImplPmuData": (
        "stack=None, evt='', ts=0, pid=0, tid=0, cpu=0, groupId=0, cpuTopo=None, comm='', "
        "period=0, count=0, countPercent=0.0, ext=None, rawData=None, cgroupName=''"
    ),
    "_libkperf.Pmu:ImplPmuDeviceData": "metric=0, count=0, mode=0",
    "_libkperf.Pmu:ImplPmuTraceData": (
        "funcs='', startTs=0, elapsedTime=0.0, pid=0, tid=0, cpu=0, comm='', stack=None, *args, "
        "**kw"
    ),
    "_libkperf.Pmu:PmuAppendData": "fromData, toData",
    "_libkperf.Pmu:PmuAttr": (
        "evtList=None, pidList=None, cpuList=None, evtAttr=None, sampleRate=0, useFreq=False, "
        "excludeUser=False, excludeKernel=False, excludeGuest=False, excludeHost=False, "
        "symbolMode=0, callStack=False, blockedSample=False, dataFilter=0, evFilter=0, "
        "minLatency=0, includeNewFork=False, branchSampleFilter=0, cgroupNameList=None, "
        "enableUserAccess=False, enableBpf=False, enableHwMetric=False, enableOnExec=False, "
        "perThread=False"
    ),
    "_libkperf.Pmu:PmuBeginWrite": "path, pattr, addIdHdr",
    "_libkperf.Pmu:PmuClose": "pd",
    "_libkperf.Pmu:PmuCollect": "pd, milliseconds, interval",
    "_libkperf.Pmu:PmuCpuFreqDetail": "pointer=None, len=0",
    "_libkperf.Pmu:PmuData": "pointer=None, len=0",
    "_libkperf.Pmu:PmuDataFree": "pmuData",
    "_libkperf.Pmu:PmuDeviceAttr": "metric=0, bdf=None, port=None",
    "_libkperf.Pmu:PmuDeviceBdfList": "bdf_type",
    "_libkperf.Pmu:PmuDeviceData": "pointer=None, len=0",
    "_libkperf.Pmu:PmuDeviceOpen": "device_attr",
    "_libkperf.Pmu:PmuDisable": "pd",
    "_libkperf.Pmu:PmuDumpData": "pmuData, filepath, dumpDwf",
    "_libkperf.Pmu:PmuEnable": "pd",
    "_libkperf.Pmu:PmuEndWrite": "file",
    "_libkperf.Pmu:PmuEventList": "eventType",
    "_libkperf.Pmu:PmuExit": "pd",
    "_libkperf.Pmu:PmuGetClusterCore": "clusterId",
    "_libkperf.Pmu:PmuGetCpuFreq": "core",
    "_libkperf.Pmu:PmuGetDevMetric": "pmu_data, device_attr",
    "_libkperf.Pmu:PmuGetField": "rawData, field_name, value, vSize",
    "_libkperf.Pmu:PmuGetFieldExp": "rawData, field_name",
    "_libkperf.Pmu:PmuGetNumaCore": "numaId",
    "_libkperf.Pmu:PmuHwMetricAttr": "metric=0, basePeriodList=None, thresholdList=None, pid=0",
    "_libkperf.Pmu:PmuOpen": "collectType, pmuAttr",
    "_libkperf.Pmu:PmuOpenCpuFreqSampling": "period",
    "_libkperf.Pmu:PmuOpenWithHWMetric": "hwMetricAttr",
    "_libkperf.Pmu:PmuRead": "pd",
    "_libkperf.Pmu:PmuStop": "pd",
    "_libkperf.Pmu:PmuTraceAttr": (
        "funcs=None, pidList=None, cpuList=None, callStack=False, symbolMode=0"
    ),
    "_libkperf.Pmu:PmuTraceClose": "pd",
    "_libkperf.Pmu:PmuTraceData": "pointer=None, len=0",
    "_libkperf.Pmu:PmuTraceDataFree": "pmuTraceData",
    "_libkperf.Pmu:PmuTraceDisable": "pd",
    "_libkperf.Pmu:PmuTraceEnable": "pd",
    "_libkperf.Pmu:PmuTraceOpen": "traceType, pmuTraceAttr",
    "_libkperf.Pmu:PmuTraceRead": "pd",
    "_libkperf.Pmu:PmuWriteData": "file, data",
    "_libkperf.Pmu:ResolvePmuDataSymbol": "pmuData",
    "_libkperf.Pmu:SampleRawData": "data=''",
    "_libkperf.Pmu:SampleRawField": "field_name='', field_str='', offset=0, size=0, is_signed=0",
    "_libkperf.Pmu:Stack": "symbol=None, next=None, prev=None",
    "_libkperf.Pmu:UTraceAttr": "symSrc=None, pidList=None, cpuList=None, fetchG=0",
    "_libkperf.Pmu:UTraceClose": "pd",
    "_libkperf.Pmu:UTraceData": (
        "addr=0, comm='', tid=0, cpu=0, timestamp=0, gPtr=0, module='', func='', isRet=0, *args, "
        "**kw"
    ),
    "_libkperf.Pmu:UTraceDataFree": "traceData",
    "_libkperf.Pmu:UTraceDataList": "pointer=None, len=0",
    "_libkperf.Pmu:UTraceDisable": "pd",
    "_libkperf.Pmu:UTraceEnable": "pd",
    "_libkperf.Pmu:UTraceOpen": "attr",
    "_libkperf.Pmu:UTraceRead": "pd",
    "_libkperf.Symbol:AsmCode": "addr=0, code='', fileName='', lineNum=0",
    "_libkperf.Symbol:CtypesAsmCode": "addr=0, code='', fileName='', lineNum=0, *args, **kw",
    "_libkperf.Symbol:CtypesStackAsm": (
        "fileName='', funcStartAddr=0, functFileOffset=0, next=None, asmCode=None, *args, **kw"
    ),
    "_libkperf.Symbol:CtypesSymbol": (
        "addr=0, module='', symbolName='', mangleName='', fileName='', lineNum=0, offset=0, "
        "codeMapEndAddr=0, codeMapAddr=0, firstLine=0, mntPoint='', *args, **kw"
    ),
    "_libkperf.Symbol:FreeModuleData": "pid",
    "_libkperf.Symbol:Stack": "symbol=None, next=None, prev=None",
    "_libkperf.Symbol:StackAsm": (
        "fileName='', funcStartAddr=0, functFileOffset=0, next=None, asmCode=None"
    ),
    "_libkperf.Symbol:StackToHash": "pid, stackList",
    "_libkperf.Symbol:SymResolverMapAddr": "pid, addr",
    "_libkperf.Symbol:SymResolverRecordModule": "pid",
    "_libkperf.Symbol:SymResolverRecordModuleNoDwarf": "pid",
    "_libkperf.Symbol:Symbol": (
        "addr=0, module='', symbolName='', mangleName='', fileName='', lineNum=0, offset=0, "
        "codeMapEndAddr=0, codeMapAddr=0, firstLine=0, mntPoint=''"
    ),
}

ATTRIBUTES = {
    "kperf:CpuFreqDetail": "iter len",
    "kperf:CpuTopology": "c_cpu_topo coreId from_c_cpu_topo numaId socketId",
    "kperf:EvtAttr": "c_evt_attr excludeKernel excludeUser from_c_evt_attr groupId",
    "kperf:ImplPmuData": (
        "c_pmu_data cgroupName comm count countPercent cpu cpuTopo evt ext from_c_pmu_data "
        "groupId period pid rawData stack tid ts"
    ),
    "kperf:ImplPmuDeviceData": (
        "bdf c_pmu_device_data channelId clusterId coreId count ddrNumaId from_c_pmu_device_data "
        "metric mode numaId port socketId"
    ),
    "kperf:ImplPmuTraceData": (
        "c_pmu_trace_data comm cpu elapsedTime from_c_pmu_trace_data funcs pid stack startTs tid"
    ),
    "kperf:PmuAttr": (
        "blockedSample branchSampleFilter c_pmu_attr callStack cgroupNameList cpuList dataFilter "
        "enableBpf enableHwMetric enableOnExec enableUserAccess evFilter evtAttr evtList "
        "excludeGuest excludeHost excludeKernel excludeUser from_c_pmu_data includeNewFork "
        "minLatency numCgroup numCpu numEvt numEvtAttr numPid perThread pidList sampleRate "
        "symbolMode useFreq"
    ),
    "kperf:PmuData": "free iter len pointer",
    "kperf:PmuDataExt": "branchRecords c_pmu_data_ext event from_pmu_data_ext lat pa source va",
    "kperf:PmuDeviceAttr": "bdf c_pmu_device_attr from_c_pmu_device_attr metric port",
    "kperf:PmuDeviceData": "free iter len",
    "kperf:PmuHwMetricAttr": "c_hw_metric_attr",
    "kperf:PmuTraceAttr": (
        "c_pmu_trace_attr callStack cpuList funcs numCpu numFuncs numPid pidList symbolMode"
    ),
    "kperf:PmuTraceData": "free iter len",
    "kperf:PointerEvt": "NetApiGroReceiveEntry NetNetifRx SkebSkbCopyDatagramIovec",
    "kperf:SampleRawField": (
        "c_sample_raw_field field_name field_str from_sample_raw_field is_signed offset size"
    ),
    "kperf:UTraceAttr": "c_u_trace_attr fetchG numPid numSym pidList symSrc",
    "kperf:UTraceData": (
        "addr c_u_trace_data comm cpu from_c_u_trace_data func gPtr isRet module tid timestamp"
    ),
    "kperf:UTraceDataList": "free iter len",
    "kperf.pmu:CpuFreqDetail": "iter len",
    "kperf.pmu:CpuTopology": "c_cpu_topo coreId from_c_cpu_topo numaId socketId",
    "kperf.pmu:EvtAttr": "c_evt_attr excludeKernel excludeUser from_c_evt_attr groupId",
    "kperf.pmu:ImplPmuData": (
        "c_pmu_data cgroupName comm count countPercent cpu cpuTopo evt ext from_c_pmu_data "
        "groupId period pid rawData stack tid ts"
    ),
    "kperf.pmu:ImplPmuDeviceData": (
        "bdf c_pmu_device_data channelId clusterId coreId count ddrNumaId from_c_pmu_device_data "
        "metric mode numaId port socketId"
    ),
    "kperf.pmu:ImplPmuTraceData": (
        "c_pmu_trace_data comm cpu elapsedTime from_c_pmu_trace_data funcs pid stack startTs tid"
    ),
    "kperf.pmu:PmuAttr": (
        "blockedSample branchSampleFilter c_pmu_attr callStack cgroupNameList cpuList dataFilter "
        "enableBpf enableHwMetric enableOnExec enableUserAccess evFilter evtAttr evtList "
        "excludeGuest excludeHost excludeKernel excludeUser from_c_pmu_data includeNewFork "
        "minLatency numCgroup numCpu numEvt numEvtAttr numPid perThread pidList sampleRate "
        "symbolMode useFreq"
    ),
    "kperf.pmu:PmuData": "free iter len pointer",
    "kperf.pmu:PmuDataExt": "branchRecords c_pmu_data_ext event from_pmu_data_ext lat pa source va",
    "kperf.pmu:PmuDeviceAttr": "bdf c_pmu_device_attr from_c_pmu_device_attr metric port",
    "kperf.pmu:PmuDeviceData": "free iter len",
    "kperf.pmu:PmuHwMetricAttr": "c_hw_metric_attr",
    "kperf.pmu:PmuTraceAttr": (
        "c_pmu_trace_attr callStack cpuList funcs numCpu numFuncs numPid pidList symbolMode"
    ),
    "kperf.pmu:PmuTraceData": "free iter len",
    "kperf.pmu:SampleRawField": (
        "c_sample_raw_field field_name field_str from_sample_raw_field is_signed offset size"
    ),
    "kperf.pmu:UTraceAttr": "c_u_trace_attr fetchG numPid numSym pidList symSrc",
    "kperf.pmu:UTraceData": (
        "addr c_u_trace_data comm cpu from_c_u_trace_data func gPtr isRet module tid timestamp"
    ),
    "kperf.pmu:UTraceDataList": "free iter len",
    "kperf.trace_pointer:NetApiGroReceiveEntry": (
        "common_flags common_pid common_preempt_count common_type data_len event_name gso_size "
        "gso_type hash ip_summed l4_hash len mac_header mac_header_valid name napi_id nr_frags "
        "protocol queue_mapping skbaddr truesize vlan_proto vlan_tagged vlan_tci"
    ),
    "kperf.trace_pointer:NetNetifRx": (
        "common_flags common_pid common_preempt_count common_type event_name len name skbaddr"
    ),
    "kperf.trace_pointer:PointerCommData": (
        "common_flags common_pid common_preempt_count common_type"
    ),
    "kperf.trace_pointer:PointerEvt": "NetApiGroReceiveEntry NetNetifRx SkebSkbCopyDatagramIovec",
    "kperf.trace_pointer:SkebSkbCopyDatagramIovec": (
        "common_flags common_pid common_preempt_count common_type event_name len skbaddr"
    ),
    "ksym:Stack": "c_stack from_c_stack next prev symbol",
    "ksym:Symbol": (
        "addr c_sym codeMapAddr codeMapEndAddr fileName firstLine from_c_sym lineNum mangleName "
        "mntPoint module offset symbolName"
    ),
    "ksym.symbol:Stack": "c_stack from_c_stack next prev symbol",
    "ksym.symbol:Symbol": (
        "addr c_sym codeMapAddr codeMapEndAddr fileName firstLine from_c_sym lineNum mangleName "
        "mntPoint module offset symbolName"
    ),
    "_libkperf:AsmCode": "addr c_asm_code code fileName from_c_asm_code lineNum",
    "_libkperf:CpuTopology": "c_cpu_topo coreId from_c_cpu_topo numaId socketId",
    "_libkperf:CtypesAsmCode": "addr code fileName lineNum",
    "_libkperf:CtypesEvtAttr": "excludeKernel excludeUser groupId period",
    "_libkperf:CtypesPmuAttr": (
        "blockedSample branchSampleFilter callStack cgroupNameList cpuList dataFilter enableBpf "
        "enableHwMetric enableOnExec enableUserAccess evFilter evtAttr evtList excludeGuest "
        "excludeHost excludeKernel excludeUser includeNewFork minLatency numCgroup numCpu numEvt "
        "numEvtAttr numPid perThread pidList sampleRate symbolMode useFreq"
    ),
    "_libkperf:CtypesPmuData": (
        "cgroupName comm count countPercent cpu cpuTopo evt ext groupId period pid rawData stack "
        "tid ts"
    ),
    "_libkperf:CtypesPmuTraceAttr": (
        "callStack cpuList funcs numCpu numFuncs numPid pidList symbolMode"
    ),
    "_libkperf:CtypesPmuTraceData": "comm cpu elapsedTime funcs pid stack startTs tid",
    "_libkperf:CtypesStack": "next prev symbol",
    "_libkperf:CtypesStackAsm": "asmCode fileName funcStartAddr functFileOffset next",
    "_libkperf:CtypesSymbol": (
        "addr codeMapAddr codeMapEndAddr fileName firstLine lineNum mangleName mntPoint module "
        "offset symbolName"
    ),
    "_libkperf:CtypesSymbolSource": "moduleName symbolName",
    "_libkperf:CtypesUTraceAttr": "fetchG numPid numSym pidList symSrc",
    "_libkperf:CtypesUTraceData": "addr comm cpu func gPtr isRet module tid timestamp",
    "_libkperf:EvtAttr": "c_evt_attr excludeKernel excludeUser from_c_evt_attr groupId",
    "_libkperf:ImplPmuData": (
        "c_pmu_data cgroupName comm count countPercent cpu cpuTopo evt ext from_c_pmu_data "
        "groupId period pid rawData stack tid ts"
    ),
    "_libkperf:ImplPmuDeviceData": (
        "bdf c_pmu_device_data channelId clusterId coreId count ddrNumaId from_c_pmu_device_data "
        "metric mode numaId port socketId"
    ),
    "_libkperf:ImplPmuTraceData": (
        "c_pmu_trace_data comm cpu elapsedTime from_c_pmu_trace_data funcs pid stack startTs tid"
    ),
    "_libkperf:PmuAttr": (
        "blockedSample branchSampleFilter c_pmu_attr callStack cgroupNameList cpuList dataFilter "
        "enableBpf enableHwMetric enableOnExec enableUserAccess evFilter evtAttr evtList "
        "excludeGuest excludeHost excludeKernel excludeUser from_c_pmu_data includeNewFork "
        "minLatency numCgroup numCpu numEvt numEvtAttr numPid perThread pidList sampleRate "
        "symbolMode useFreq"
    ),
    "_libkperf:PmuCpuFreqDetail": "iter len",
    "_libkperf:PmuData": "free iter len pointer",
    "_libkperf:PmuDataExt": "branchRecords c_pmu_data_ext event from_pmu_data_ext lat pa source va",
    "_libkperf:PmuDeviceAttr": "bdf c_pmu_device_attr from_c_pmu_device_attr metric port",
    "_libkperf:PmuDeviceData": "free iter len",
    "_libkperf:PmuHwMetricAttr": "c_hw_metric_attr",
    "_libkperf:PmuTraceAttr": (
        "c_pmu_trace_attr callStack cpuList funcs numCpu numFuncs numPid pidList symbolMode"
    ),
    "_libkperf:PmuTraceData": "free iter len",
    "_libkperf:SampleRawData": "c_pmu_data_rawData data from_sample_raw_data",
    "_libkperf:SampleRawField": (
        "c_sample_raw_field field_name field_str from_sample_raw_field is_signed offset size"
    ),
    "_libkperf:Stack": "c_stack from_c_stack next prev symbol",
    "_libkperf:StackAsm": (
        "asmCode c_stack_asm fileName from_c_stack_asm funcStartAddr functFileOffset next"
    ),
    "_libkperf:Symbol": (
        "addr c_sym codeMapAddr codeMapEndAddr fileName firstLine from_c_sym lineNum mangleName "
        "mntPoint module offset symbolName"
    ),
    "_libkperf:UTraceAttr": "c_u_trace_attr fetchG numPid numSym pidList symSrc",
    "_libkperf:UTraceData": (
        "addr c_u_trace_data comm cpu from_c_u_trace_data func gPtr isRet module tid timestamp"
    ),
    "_libkperf:UTraceDataList": "free iter len",
    "_libkperf.Pmu:BranchRecords": "iter len",
    "_libkperf.Pmu:CpuTopology": "c_cpu_topo coreId from_c_cpu_topo numaId socketId",
    "_libkperf.Pmu:CtypesBranchRecords": "branchRecords nr",
    "_libkperf.Pmu:CtypesCpuTopology": "coreId numaId socketId",
    "_libkperf.Pmu:CtypesEvtAttr": "excludeKernel excludeUser groupId period",
    "_libkperf.Pmu:CtypesPmuAttr": (
        "blockedSample branchSampleFilter callStack cgroupNameList cpuList dataFilter enableBpf "
        "enableHwMetric enableOnExec enableUserAccess evFilter evtAttr evtList excludeGuest "
        "excludeHost excludeKernel excludeUser includeNewFork minLatency numCgroup numCpu numEvt "
        "numEvtAttr numPid perThread pidList sampleRate symbolMode useFreq"
    ),
    "_libkperf.Pmu:CtypesPmuCpuFreqDetail": "avgFreq cpuId maxFreq minFreq",
    "_libkperf.Pmu:CtypesPmuData": (
        "cgroupName comm count countPercent cpu cpuTopo evt ext groupId period pid rawData stack "
        "tid ts"
    ),
    "_libkperf.Pmu:CtypesPmuDataExt": "ext",
    "_libkperf.Pmu:CtypesPmuDeviceAttr": "bdf metric port",
    "_libkperf.Pmu:CtypesPmuDeviceData": (
        "bdf channelId clusterId coreId count ddrNumaId metric mode numaId port socketId"
    ),
    "_libkperf.Pmu:CtypesPmuHwMetricAttr": "basePeriodList metric pid thresholdList",
    "_libkperf.Pmu:CtypesPmuTraceAttr": (
        "callStack cpuList funcs numCpu numFuncs numPid pidList symbolMode"
    ),
    "_libkperf.Pmu:CtypesPmuTraceData": "comm cpu elapsedTime funcs pid stack startTs tid",
    "_libkperf.Pmu:CtypesSampleRawData": "data",
    "_libkperf.Pmu:CtypesSampleRawField": "fieldName fieldStr isSigned offset size",
    "_libkperf.Pmu:CtypesStack": "next prev symbol",
    "_libkperf.Pmu:CtypesSymbolSource": "moduleName symbolName",
    "_libkperf.Pmu:CtypesUTraceAttr": "fetchG numPid numSym pidList symSrc",
    "_libkperf.Pmu:CtypesUTraceData": "addr comm cpu func gPtr isRet module tid timestamp",
    "_libkperf.Pmu:CytpesBranchSampleRecord": "cycles fromAddr misPred predicted toAddr",
    "_libkperf.Pmu:CytpesSpeDataExt": "event lat pa source va",
    "_libkperf.Pmu:DdrDataStructure": "channelId ddrNumaId socketId",
    "_libkperf.Pmu:EvtAttr": "c_evt_attr excludeKernel excludeUser from_c_evt_attr groupId",
    "_libkperf.Pmu:ImplBranchRecords": (
        "c_branch_record cycles fromAddr from_c_branch_record misPred predicted toAddr"
    ),
    "_libkperf.Pmu:ImplPmuCpuFreqDetail": (
        "avgFreq c_pmu_cpu_freq_detail cpuId from_c_pmu_cpu_freq_detail maxFreq minFreq"
    ),
    "_libkperf.Pmu:ImplPmuData": (
        "c_pmu_data cgroupName comm count countPercent cpu cpuTopo evt ext from_c_pmu_data "
        "groupId period pid rawData stack tid ts"
    ),
    "_libkperf.Pmu:ImplPmuDeviceData": (
        "bdf c_pmu_device_data channelId clusterId coreId count ddrNumaId from_c_pmu_device_data "
        "metric mode numaId port socketId"
    ),
    "_libkperf.Pmu:ImplPmuTraceData": (
        "c_pmu_trace_data comm cpu elapsedTime from_c_pmu_trace_data funcs pid stack startTs tid"
    ),
    "_libkperf.Pmu:PmuAttr": (
        "blockedSample branchSampleFilter c_pmu_attr callStack cgroupNameList cpuList dataFilter "
        "enableBpf enableHwMetric enableOnExec enableUserAccess evFilter evtAttr evtList "
        "excludeGuest excludeHost excludeKernel excludeUser from_c_pmu_data includeNewFork "
        "minLatency numCgroup numCpu numEvt numEvtAttr numPid perThread pidList sampleRate "
        "symbolMode useFreq"
    ),
    "_libkperf.Pmu:PmuCpuFreqDetail": "iter len",
    "_libkperf.Pmu:PmuData": "free iter len pointer",
    "_libkperf.Pmu:PmuDataExt": (
        "branchRecords c_pmu_data_ext event from_pmu_data_ext lat pa source va"
    ),
    "_libkperf.Pmu:PmuDataExtUnion": "branchRecords speDataExt",
    "_libkperf.Pmu:PmuDeviceAttr": "bdf c_pmu_device_attr from_c_pmu_device_attr metric port",
    "_libkperf.Pmu:PmuDeviceData": "free iter len",
    "_libkperf.Pmu:PmuHwMetricAttr": "c_hw_metric_attr",
    "_libkperf.Pmu:PmuTraceAttr": (
        "c_pmu_trace_attr callStack cpuList funcs numCpu numFuncs numPid pidList symbolMode"
    ),
    "_libkperf.Pmu:PmuTraceData": "free iter len",
    "_libkperf.Pmu:SampleRateUnion": "freq period",
    "_libkperf.Pmu:SampleRawData": "c_pmu_data_rawData data from_sample_raw_data",
    "_libkperf.Pmu:SampleRawField": (
        "c_sample_raw_field field_name field_str from_sample_raw_field is_signed offset size"
    ),
    "_libkperf.Pmu:Stack": "c_stack from_c_stack next prev symbol",
    "_libkperf.Pmu:UTraceAttr": "c_u_trace_attr fetchG numPid numSym pidList symSrc",
    "_libkperf.Pmu:UTraceData": (
        "addr c_u_trace_data comm cpu from_c_u_trace_data func gPtr isRet module tid timestamp"
    ),
    "_libkperf.Pmu:UTraceDataList": "free iter len",
    "_libkperf.Symbol:AsmCode": "addr c_asm_code code fileName from_c_asm_code lineNum",
    "_libkperf.Symbol:CtypesAsmCode": "addr code fileName lineNum",
    "_libkperf.Symbol:CtypesStack": "next prev symbol",
    "_libkperf.Symbol:CtypesStackAsm": "asmCode fileName funcStartAddr functFileOffset next",
    "_libkperf.Symbol:CtypesSymbol": (
        "addr codeMapAddr codeMapEndAddr fileName firstLine lineNum mangleName mntPoint module "
        "offset symbolName"
    ),
    "_libkperf.Symbol:Stack": "c_stack from_c_stack next prev symbol",
    "_libkperf.Symbol:StackAsm": (
        "asmCode c_stack_asm fileName from_c_stack_asm funcStartAddr functFileOffset next"
    ),
    "_libkperf.Symbol:Symbol": (
        "addr c_sym codeMapAddr codeMapEndAddr fileName firstLine from_c_sym lineNum mangleName "
        "mntPoint module offset symbolName"
    ),
}

VALUES = {
    "kperf:BranchSampleFilter": (
        "KPERF_NO_BRANCH_SAMPLE=0 KPERF_SAMPLE_BRANCH_ABORT_TX=128 KPERF_SAMPLE_BRANCH_ANY=8 "
        "KPERF_SAMPLE_BRANCH_ANY_CALL=16 KPERF_SAMPLE_BRANCH_ANY_RETURN=32 "
        "KPERF_SAMPLE_BRANCH_CALL=8192 KPERF_SAMPLE_BRANCH_CALL_STACK=2048 "
        "KPERF_SAMPLE_BRANCH_COND=1024 KPERF_SAMPLE_BRANCH_HV=4 KPERF_SAMPLE_BRANCH_IND_CALL=64 "
        "KPERF_SAMPLE_BRANCH_IND_JUMP=4096 KPERF_SAMPLE_BRANCH_IN_TX=256 "
        "KPERF_SAMPLE_BRANCH_KERNEL=2 KPERF_SAMPLE_BRANCH_NO_CYCLES=32768 "
        "KPERF_SAMPLE_BRANCH_NO_FLAGES=16384 KPERF_SAMPLE_BRANCH_NO_TX=512 "
        "KPERF_SAMPLE_BRANCH_TYPE_SAVE=65536 KPERF_SAMPLE_BRANCH_USER=1"
    ),
    "kperf:Error": (
        "COMMON_ERR_NOMEM=1 COMMON_ERR_WRITE=2 LIBPERF_ERR_ALLOCATE_REGISTER_FAILED=1076 "
        "LIBPERF_ERR_BPF_ACT_FAILED=1079 LIBPERF_ERR_BRANCH_JUST_SUPPORT_SAMPLING=1043 "
        "LIBPERF_ERR_BUFFER_CORRUPTED=1082 LIBPERF_ERR_CHECK_USER_ACCESS=1077 "
        "LIBPERF_ERR_CHIP_TYPE_INVALID=1001 LIBPERF_ERR_CLUSTER_ID_OVERSIZE=1063 "
        "LIBPERF_ERR_COUNTER_INDEX_IS_ZERO=1078 LIBPERF_ERR_COUNT_MMAP_IS_NULL=1074 "
        "LIBPERF_ERR_COUNT_OVERFLOW=1035 LIBPERF_ERR_CPUFREQ_NOT_CONFIG=1062 "
        "LIBPERF_ERR_DEVICE_BUSY=1012 LIBPERF_ERR_DEVICE_INVAL=1013 "
        "LIBPERF_ERR_ENABLE_USER_ACCESS_FAILED=1075 LIBPERF_ERR_FAILED_PMU_DISABLE=1026 "
        "LIBPERF_ERR_FAILED_PMU_ENABLE=1025 LIBPERF_ERR_FAILED_PMU_RESET=1027 "
        "LIBPERF_ERR_FAIL_GET_CPU=1009 LIBPERF_ERR_FAIL_GET_PROC=1010 "
        "LIBPERF_ERR_FAIL_LISTEN_PROC=1002 LIBPERF_ERR_FAIL_MMAP=1014 "
        "LIBPERF_ERR_FAIL_RESOLVE_MODULE=1015 LIBPERF_ERR_FIND_FIELD_LOSS=1034 "
        "LIBPERF_ERR_INTERFACE_NOT_SUPPORT_X86=1065 LIBPERF_ERR_INVALID_BDF_VALUE=1053 "
        "LIBPERF_ERR_INVALID_BLOCKED_SAMPLE=1047 LIBPERF_ERR_INVALID_BPF_PARAM=1080 "
        "LIBPERF_ERR_INVALID_BRANCH_SAMPLE_FILTER=1042 LIBPERF_ERR_INVALID_CGROUP_LIST=1069 "
        "LIBPERF_ERR_INVALID_CPULIST=1003 LIBPERF_ERR_INVALID_CPU_FREQ_PERIOD=1067 "
        "LIBPERF_ERR_INVALID_DATA_FILTER=1087 LIBPERF_ERR_INVALID_EVENT=1007 "
        "LIBPERF_ERR_INVALID_EVTATTR=1073 LIBPERF_ERR_INVALID_EVTLIST=1005 "
        "LIBPERF_ERR_INVALID_EVT_FILTER=1086 LIBPERF_ERR_INVALID_FIELD_ARGS=1033 "
        "LIBPERF_ERR_INVALID_GROUP_ALL_UNCORE=1037 LIBPERF_ERR_INVALID_GROUP_SPE=1036 "
        "LIBPERF_ERR_INVALID_HWMETRIC_ATTR=1084 LIBPERF_ERR_INVALID_IOSMMU_DIR=1056 "
        "LIBPERF_ERR_INVALID_METRIC_TYPE=1017 LIBPERF_ERR_INVALID_MIN_LATENCY=1085 "
        "LIBPERF_ERR_INVALID_MTRIC_PARAM=1060 LIBPERF_ERR_INVALID_PD=1006 "
        "LIBPERF_ERR_INVALID_PID=1018 LIBPERF_ERR_INVALID_PIDLIST=1004 "
        "LIBPERF_ERR_INVALID_PMU_BDF_TYPE=1064 LIBPERF_ERR_INVALID_PMU_DATA=1024 "
        "LIBPERF_ERR_INVALID_PMU_DEVICES_BDF=1051 LIBPERF_ERR_INVALID_PMU_DEVICES_METRIC=1050 "
        "LIBPERF_ERR_INVALID_PMU_FILE=1071 LIBPERF_ERR_INVALID_SAMPLE_RATE=1032 "
        "LIBPERF_ERR_INVALID_SMMU_NAME=1057 LIBPERF_ERR_INVALID_SYSCALL_FUN=1039 "
        "LIBPERF_ERR_INVALID_TASK_TYPE=1019 LIBPERF_ERR_INVALID_TIME=1020 "
        "LIBPERF_ERR_INVALID_TRACE_TYPE=1038 LIBPERF_ERR_KERNEL_NOT_SUPPORT=1016 "
        "LIBPERF_ERR_LBR_DRIVER_INVALID=1092 LIBPERF_ERR_NOT_OPENED=1028 "
        "LIBPERF_ERR_NOT_SUPPORT_CONFIG_EVENT=1046 LIBPERF_ERR_NOT_SUPPORT_EXEC_ON=1088 "
        "LIBPERF_ERR_NOT_SUPPORT_GROUP_EVENT=1048 LIBPERF_ERR_NOT_SUPPORT_HWMETRIC=1083 "
        "LIBPERF_ERR_NOT_SUPPORT_METRIC=1066 LIBPERF_ERR_NOT_SUPPORT_PCIE_BDF=1054 "
        "LIBPERF_ERR_NOT_SUPPORT_PCIE_COUNTING=1058 LIBPERF_ERR_NOT_SUPPORT_PCIE_PORT=1072 "
        "LIBPERF_ERR_NOT_SUPPORT_PER_THREAD=1089 LIBPERF_ERR_NOT_SUPPORT_PMU_FILE=1070 "
        "LIBPERF_ERR_NOT_SUPPORT_SMMU_BDF=1055 LIBPERF_ERR_NOT_SUPPORT_SYSTEM_SAMPLE=1049 "
        "LIBPERF_ERR_NO_AVAIL_PD=1000 LIBPERF_ERR_NO_PERMISSION=1011 LIBPERF_ERR_NO_PROC=1021 "
        "LIBPERF_ERR_NULL_POINTER=1081 LIBPERF_ERR_OPEN_INVALID_FILE=1052 "
        "LIBPERF_ERR_OPEN_PCI_FILE_FAILD=1059 LIBPERF_ERR_OPEN_SYSCALL_HEADER_FAILED=1041 "
        "LIBPERF_ERR_PATH_INACCESSIBLE=1031 LIBPERF_ERR_PMU_DATA_NO_FOUND=1068 "
        "LIBPERF_ERR_PMU_DEVICES_NULL=1061 LIBPERF_ERR_QUERY_EVENT_LIST_FAILED=1030 "
        "LIBPERF_ERR_QUERY_EVENT_TYPE_INVALID=1029 LIBPERF_ERR_QUERY_SYSCALL_LIST_FAILED=1040 "
        "LIBPERF_ERR_RAISE_FD=1023 LIBPERF_ERR_RESET_FD=1044 "
        "LIBPERF_ERR_SET_FD_RDONLY_NONBLOCK=1045 LIBPERF_ERR_SPE_UNAVAIL=1008 "
        "LIBPERF_ERR_TOO_MANY_FD=1022 LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED=1090 "
        "LIBPERF_ERR_UTRACE_JAVA_PROCESS_FAILED=1093 "
        "LIBPERF_ERR_UTRACE_PROBE_REGISTER_FAILED=1091 LIBPERF_WARN_CTXID_LOST=1000 "
        "LIBPERF_WARN_FAIL_GET_PROC=1001 LIBPERF_WARN_INVALID_GROUP_HAS_UNCORE=1002 "
        "LIBPERF_WARN_INVALID_SMMU_BDF=1004 LIBPERF_WARN_LBR_DRIVER_START_FAILED=1006 "
        "LIBPERF_WARN_PCIE_BIOS_NOT_NEWEST=1003 LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED=1005 "
        "LIBSYM_ERR_BASE=100 LIBSYM_ERR_BUILDID_TOO_LONG=118 LIBSYM_ERR_CMD_OPERATE_FAILED=112 "
        "LIBSYM_ERR_DWARF_FORMAT_FAILED=101 LIBSYM_ERR_ELFIN_FOMAT_FAILED=102 "
        "LIBSYM_ERR_FILE_INVALID=116 LIBSYM_ERR_FILE_NOT_RGE=113 LIBSYM_ERR_KALLSYMS_INVALID=100 "
        "LIBSYM_ERR_MAP_ADDR_MODULE_FAILED=105 LIBSYM_ERR_MAP_CODE_FIND_ELF_FAILED=111 "
        "LIBSYM_ERR_MAP_CODE_KERNEL_NOT_SUPPORT=110 LIBSYM_ERR_MAP_KERNAL_ADDR_FAILED=106 "
        "LIBSYM_ERR_NOT_FIND_PID=104 LIBSYM_ERR_OPEN_FILE_FAILED=103 "
        "LIBSYM_ERR_PARAM_PID_INVALID=107 LIBSYM_ERR_READ_BUILDID=117 "
        "LIBSYM_ERR_SNPRINF_OPERATE_FAILED=109 LIBSYM_ERR_START_SMALLER_END=114 "
        "LIBSYM_ERR_STOUL_OPERATE_FAILED=115 LIBSYM_ERR_STRCPY_OPERATE_FAILED=108 SUCCESS=0 "
        "UNKNOWN_ERROR=9999"
    ),
    "kperf:HitDataSource": (
        "HIP_L1=18 HIP_L2=16 HIP_L2_HITM=17 HIP_L3=2 HIP_L3_HITM=3 HIP_LOCAL_MEM=8 HIP_NC_DEV=13 "
        "HIP_PEER_CLUSTER=4 HIP_PEER_CLUSTER_HITM=5 HIP_PEER_CPU=0 HIP_PEER_CPU_HITM=1 "
        "HIP_REMOTE_MEM=9 HIP_REMOTE_SOCKET=6 HIP_REMOTE_SOCKET_HITM=7"
    ),
    "kperf:PmuBdfType": "PMU_BDF_TYPE_PCIE=0 PMU_BDF_TYPE_SMMU=1",
    "kperf:PmuDeviceMetric": (
        "PMU_DDR_READ_BW=0 PMU_DDR_WRITE_BW=1 PMU_HHA_CROSS_NUMA=14 PMU_HHA_CROSS_SOCKET=15 "
        "PMU_L3_LAT=5 PMU_L3_MISS=3 PMU_L3_REF=4 PMU_L3_TRAFFIC=2 PMU_PCIE_RX_MRD_BW=6 "
        "PMU_PCIE_RX_MRD_LAT=10 PMU_PCIE_RX_MWR_BW=7 PMU_PCIE_RX_MWR_LAT=11 PMU_PCIE_TX_MRD_BW=8 "
        "PMU_PCIE_TX_MRD_LAT=12 PMU_PCIE_TX_MWR_BW=9 PMU_SMMU_TRAN=13"
    ),
    "kperf:PmuEventType": "ALL_EVENT=3 CORE_EVENT=0 TRACE_EVENT=2 UNCORE_EVENT=1",
    "kperf:PmuHwMetric": (
        "PMU_HWM_BRACH_LOADS_MISS=256 PMU_HWM_CACHE_MISS=2 PMU_HWM_CPI=1 "
        "PMU_HWM_DTLB_LOAD_MISS=64 PMU_HWM_ITLD_LOAD_MISS=128 PMU_HWM_L1_DCACHE_MISS=16 "
        "PMU_HWM_L1_ICACHE_LOAD_MISS=32 PMU_HWM_L2D_CACHE_MISS=8 PMU_HWM_L3_CACHE_MISS=4"
    ),
    "kperf:PmuMetricMode": (
        "PMU_METRIC_BDF=4 PMU_METRIC_CHANNEL=5 PMU_METRIC_CLUSTER=3 PMU_METRIC_CORE=1 "
        "PMU_METRIC_INVALID=0 PMU_METRIC_NUMA=2"
    ),
    "kperf:PmuTaskType": "COUNTING=0 MAX_TASK_TYPE=3 SAMPLING=1 SPE_SAMPLING=2",
    "kperf:PmuTraceType": "TRACE_SYS_CALL=0",
    "kperf:SpeEvent": (
        "SPE_EV_ALIGNMENT=2048 SPE_EV_EMPTY_PRED=262144 SPE_EV_EXCEPT=1 SPE_EV_L1D_ACCESS=4 "
        "SPE_EV_L1D_REFILL=8 SPE_EV_LLC_ACCESS=256 SPE_EV_LLC_MISS=512 SPE_EV_MISPRED=128 "
        "SPE_EV_NOT_TAKEN=64 SPE_EV_PARTIAL_PRED=131072 SPE_EV_REMOTE_ACCESS=1024 "
        "SPE_EV_RETIRED=2 SPE_EV_TLB_ACCESS=16 SPE_EV_TLB_WALK=32"
    ),
    "kperf:SpeEventFilter": (
        "SPE_EVENT_L1DMISS=8 SPE_EVENT_MISPREDICTED=128 SPE_EVENT_NONE=0 SPE_EVENT_RETIRED=2 "
        "SPE_EVENT_TLB_WALK=32"
    ),
    "kperf:SpeFilter": (
        "BRANCH_FILTER=4294967296 JITTER=65536 LOAD_FILTER=8589934592 PA_ENABLE=2 PCT_ENABLE=4 "
        "SPE_DATA_ALL=30064836615 SPE_FILTER_NONE=0 STORE_FILTER=17179869184 TS_ENABLE=1"
    ),
    "kperf:SymbolMode": (
        "NO_SYMBOL_RESOLVE=0 RESOLVE_DELAY_DWARF=4 RESOLVE_DELAY_ELF=3 RESOLVE_ELF=1 "
        "RESOLVE_ELF_DWARF=2"
    ),
    "kperf.pmu:BranchSampleFilter": (
        "KPERF_NO_BRANCH_SAMPLE=0 KPERF_SAMPLE_BRANCH_ABORT_TX=128 KPERF_SAMPLE_BRANCH_ANY=8 "
        "KPERF_SAMPLE_BRANCH_ANY_CALL=16 KPERF_SAMPLE_BRANCH_ANY_RETURN=32 "
        "KPERF_SAMPLE_BRANCH_CALL=8192 KPERF_SAMPLE_BRANCH_CALL_STACK=2048 "
        "KPERF_SAMPLE_BRANCH_COND=1024 KPERF_SAMPLE_BRANCH_HV=4 KPERF_SAMPLE_BRANCH_IND_CALL=64 "
        "KPERF_SAMPLE_BRANCH_IND_JUMP=4096 KPERF_SAMPLE_BRANCH_IN_TX=256 "
        "KPERF_SAMPLE_BRANCH_KERNEL=2 KPERF_SAMPLE_BRANCH_NO_CYCLES=32768 "
        "KPERF_SAMPLE_BRANCH_NO_FLAGES=16384 KPERF_SAMPLE_BRANCH_NO_TX=512 "
        "KPERF_SAMPLE_BRANCH_TYPE_SAVE=65536 KPERF_SAMPLE_BRANCH_USER=1"
    ),
    "kperf.pmu:HitDataSource": (
        "HIP_L1=18 HIP_L2=16 HIP_L2_HITM=17 HIP_L3=2 HIP_L3_HITM=3 HIP_LOCAL_MEM=8 HIP_NC_DEV=13 "
        "HIP_PEER_CLUSTER=4 HIP_PEER_CLUSTER_HITM=5 HIP_PEER_CPU=0 HIP_PEER_CPU_HITM=1 "
        "HIP_REMOTE_MEM=9 HIP_REMOTE_SOCKET=6 HIP_REMOTE_SOCKET_HITM=7"
    ),
    "kperf.pmu:PmuBdfType": "PMU_BDF_TYPE_PCIE=0 PMU_BDF_TYPE_SMMU=1",
    "kperf.pmu:PmuDeviceMetric": (
        "PMU_DDR_READ_BW=0 PMU_DDR_WRITE_BW=1 PMU_HHA_CROSS_NUMA=14 PMU_HHA_CROSS_SOCKET=15 "
        "PMU_L3_LAT=5 PMU_L3_MISS=3 PMU_L3_REF=4 PMU_L3_TRAFFIC=2 PMU_PCIE_RX_MRD_BW=6 "
        "PMU_PCIE_RX_MRD_LAT=10 PMU_PCIE_RX_MWR_BW=7 PMU_PCIE_RX_MWR_LAT=11 PMU_PCIE_TX_MRD_BW=8 "
        "PMU_PCIE_TX_MRD_LAT=12 PMU_PCIE_TX_MWR_BW=9 PMU_SMMU_TRAN=13"
    ),
    "kperf.pmu:PmuEventType": "ALL_EVENT=3 CORE_EVENT=0 TRACE_EVENT=2 UNCORE_EVENT=1",
    "kperf.pmu:PmuHwMetric": (
        "PMU_HWM_BRACH_LOADS_MISS=256 PMU_HWM_CACHE_MISS=2 PMU_HWM_CPI=1 "
        "PMU_HWM_DTLB_LOAD_MISS=64 PMU_HWM_ITLD_LOAD_MISS=128 PMU_HWM_L1_DCACHE_MISS=16 "
        "PMU_HWM_L1_ICACHE_LOAD_MISS=32 PMU_HWM_L2D_CACHE_MISS=8 PMU_HWM_L3_CACHE_MISS=4"
    ),
    "kperf.pmu:PmuMetricMode": (
        "PMU_METRIC_BDF=4 PMU_METRIC_CHANNEL=5 PMU_METRIC_CLUSTER=3 PMU_METRIC_CORE=1 "
        "PMU_METRIC_INVALID=0 PMU_METRIC_NUMA=2"
    ),
    "kperf.pmu:PmuTaskType": "COUNTING=0 MAX_TASK_TYPE=3 SAMPLING=1 SPE_SAMPLING=2",
    "kperf.pmu:PmuTraceType": "TRACE_SYS_CALL=0",
    "kperf.pmu:SpeEvent": (
        "SPE_EV_ALIGNMENT=2048 SPE_EV_EMPTY_PRED=262144 SPE_EV_EXCEPT=1 SPE_EV_L1D_ACCESS=4 "
        "SPE_EV_L1D_REFILL=8 SPE_EV_LLC_ACCESS=256 SPE_EV_LLC_MISS=512 SPE_EV_MISPRED=128 "
        "SPE_EV_NOT_TAKEN=64 SPE_EV_PARTIAL_PRED=131072 SPE_EV_REMOTE_ACCESS=1024 "
        "SPE_EV_RETIRED=2 SPE_EV_TLB_ACCESS=16 SPE_EV_TLB_WALK=32"
    ),
    "kperf.pmu:SpeEventFilter": (
        "SPE_EVENT_L1DMISS=8 SPE_EVENT_MISPREDICTED=128 SPE_EVENT_NONE=0 SPE_EVENT_RETIRED=2 "
        "SPE_EVENT_TLB_WALK=32"
    ),
    "kperf.pmu:SpeFilter": (
        "BRANCH_FILTER=4294967296 JITTER=65536 LOAD_FILTER=8589934592 PA_ENABLE=2 PCT_ENABLE=4 "
        "SPE_DATA_ALL=30064836615 SPE_FILTER_NONE=0 STORE_FILTER=17179869184 TS_ENABLE=1"
    ),
    "kperf.pmu:SymbolMode": (
        "NO_SYMBOL_RESOLVE=0 RESOLVE_DELAY_DWARF=4 RESOLVE_DELAY_ELF=3 RESOLVE_ELF=1 "
        "RESOLVE_ELF_DWARF=2"
    ),
    "kperf.perror:Error": (
        "COMMON_ERR_NOMEM=1 COMMON_ERR_WRITE=2 LIBPERF_ERR_ALLOCATE_REGISTER_FAILED=1076 "
        "LIBPERF_ERR_BPF_ACT_FAILED=1079 LIBPERF_ERR_BRANCH_JUST_SUPPORT_SAMPLING=1043 "
        "LIBPERF_ERR_BUFFER_CORRUPTED=1082 LIBPERF_ERR_CHECK_USER_ACCESS=1077 "
        "LIBPERF_ERR_CHIP_TYPE_INVALID=1001 LIBPERF_ERR_CLUSTER_ID_OVERSIZE=1063 "
        "LIBPERF_ERR_COUNTER_INDEX_IS_ZERO=1078 LIBPERF_ERR_COUNT_MMAP_IS_NULL=1074 "
        "LIBPERF_ERR_COUNT_OVERFLOW=1035 LIBPERF_ERR_CPUFREQ_NOT_CONFIG=1062 "
        "LIBPERF_ERR_DEVICE_BUSY=1012 LIBPERF_ERR_DEVICE_INVAL=1013 "
        "LIBPERF_ERR_ENABLE_USER_ACCESS_FAILED=1075 LIBPERF_ERR_FAILED_PMU_DISABLE=1026 "
        "LIBPERF_ERR_FAILED_PMU_ENABLE=1025 LIBPERF_ERR_FAILED_PMU_RESET=1027 "
        "LIBPERF_ERR_FAIL_GET_CPU=1009 LIBPERF_ERR_FAIL_GET_PROC=1010 "
        "LIBPERF_ERR_FAIL_LISTEN_PROC=1002 LIBPERF_ERR_FAIL_MMAP=1014 "
        "LIBPERF_ERR_FAIL_RESOLVE_MODULE=1015 LIBPERF_ERR_FIND_FIELD_LOSS=1034 "
        "LIBPERF_ERR_INTERFACE_NOT_SUPPORT_X86=1065 LIBPERF_ERR_INVALID_BDF_VALUE=1053 "
        "LIBPERF_ERR_INVALID_BLOCKED_SAMPLE=1047 LIBPERF_ERR_INVALID_BPF_PARAM=1080 "
        "LIBPERF_ERR_INVALID_BRANCH_SAMPLE_FILTER=1042 LIBPERF_ERR_INVALID_CGROUP_LIST=1069 "
        "LIBPERF_ERR_INVALID_CPULIST=1003 LIBPERF_ERR_INVALID_CPU_FREQ_PERIOD=1067 "
        "LIBPERF_ERR_INVALID_DATA_FILTER=1087 LIBPERF_ERR_INVALID_EVENT=1007 "
        "LIBPERF_ERR_INVALID_EVTATTR=1073 LIBPERF_ERR_INVALID_EVTLIST=1005 "
        "LIBPERF_ERR_INVALID_EVT_FILTER=1086 LIBPERF_ERR_INVALID_FIELD_ARGS=1033 "
        "LIBPERF_ERR_INVALID_GROUP_ALL_UNCORE=1037 LIBPERF_ERR_INVALID_GROUP_SPE=1036 "
        "LIBPERF_ERR_INVALID_HWMETRIC_ATTR=1084 LIBPERF_ERR_INVALID_IOSMMU_DIR=1056 "
        "LIBPERF_ERR_INVALID_METRIC_TYPE=1017 LIBPERF_ERR_INVALID_MIN_LATENCY=1085 "
        "LIBPERF_ERR_INVALID_MTRIC_PARAM=1060 LIBPERF_ERR_INVALID_PD=1006 "
        "LIBPERF_ERR_INVALID_PID=1018 LIBPERF_ERR_INVALID_PIDLIST=1004 "
        "LIBPERF_ERR_INVALID_PMU_BDF_TYPE=1064 LIBPERF_ERR_INVALID_PMU_DATA=1024 "
        "LIBPERF_ERR_INVALID_PMU_DEVICES_BDF=1051 LIBPERF_ERR_INVALID_PMU_DEVICES_METRIC=1050 "
        "LIBPERF_ERR_INVALID_PMU_FILE=1071 LIBPERF_ERR_INVALID_SAMPLE_RATE=1032 "
        "LIBPERF_ERR_INVALID_SMMU_NAME=1057 LIBPERF_ERR_INVALID_SYSCALL_FUN=1039 "
        "LIBPERF_ERR_INVALID_TASK_TYPE=1019 LIBPERF_ERR_INVALID_TIME=1020 "
        "LIBPERF_ERR_INVALID_TRACE_TYPE=1038 LIBPERF_ERR_KERNEL_NOT_SUPPORT=1016 "
        "LIBPERF_ERR_LBR_DRIVER_INVALID=1092 LIBPERF_ERR_NOT_OPENED=1028 "
        "LIBPERF_ERR_NOT_SUPPORT_CONFIG_EVENT=1046 LIBPERF_ERR_NOT_SUPPORT_EXEC_ON=1088 "
        "LIBPERF_ERR_NOT_SUPPORT_GROUP_EVENT=1048 LIBPERF_ERR_NOT_SUPPORT_HWMETRIC=1083 "
        "LIBPERF_ERR_NOT_SUPPORT_METRIC=1066 LIBPERF_ERR_NOT_SUPPORT_PCIE_BDF=1054 "
        "LIBPERF_ERR_NOT_SUPPORT_PCIE_COUNTING=1058 LIBPERF_ERR_NOT_SUPPORT_PCIE_PORT=1072 "
        "LIBPERF_ERR_NOT_SUPPORT_PER_THREAD=1089 LIBPERF_ERR_NOT_SUPPORT_PMU_FILE=1070 "
        "LIBPERF_ERR_NOT_SUPPORT_SMMU_BDF=1055 LIBPERF_ERR_NOT_SUPPORT_SYSTEM_SAMPLE=1049 "
        "LIBPERF_ERR_NO_AVAIL_PD=1000 LIBPERF_ERR_NO_PERMISSION=1011 LIBPERF_ERR_NO_PROC=1021 "
        "LIBPERF_ERR_NULL_POINTER=1081 LIBPERF_ERR_OPEN_INVALID_FILE=1052 "
        "LIBPERF_ERR_OPEN_PCI_FILE_FAILD=1059 LIBPERF_ERR_OPEN_SYSCALL_HEADER_FAILED=1041 "
        "LIBPERF_ERR_PATH_INACCESSIBLE=1031 LIBPERF_ERR_PMU_DATA_NO_FOUND=1068 "
        "LIBPERF_ERR_PMU_DEVICES_NULL=1061 LIBPERF_ERR_QUERY_EVENT_LIST_FAILED=1030 "
        "LIBPERF_ERR_QUERY_EVENT_TYPE_INVALID=1029 LIBPERF_ERR_QUERY_SYSCALL_LIST_FAILED=1040 "
        "LIBPERF_ERR_RAISE_FD=1023 LIBPERF_ERR_RESET_FD=1044 "
        "LIBPERF_ERR_SET_FD_RDONLY_NONBLOCK=1045 LIBPERF_ERR_SPE_UNAVAIL=1008 "
        "LIBPERF_ERR_TOO_MANY_FD=1022 LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED=1090 "
        "LIBPERF_ERR_UTRACE_JAVA_PROCESS_FAILED=1093 "
        "LIBPERF_ERR_UTRACE_PROBE_REGISTER_FAILED=1091 LIBPERF_WARN_CTXID_LOST=1000 "
        "LIBPERF_WARN_FAIL_GET_PROC=1001 LIBPERF_WARN_INVALID_GROUP_HAS_UNCORE=1002 "
        "LIBPERF_WARN_INVALID_SMMU_BDF=1004 LIBPERF_WARN_LBR_DRIVER_START_FAILED=1006 "
        "LIBPERF_WARN_PCIE_BIOS_NOT_NEWEST=1003 LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED=1005 "
        "LIBSYM_ERR_BASE=100 LIBSYM_ERR_BUILDID_TOO_LONG=118 LIBSYM_ERR_CMD_OPERATE_FAILED=112 "
        "LIBSYM_ERR_DWARF_FORMAT_FAILED=101 LIBSYM_ERR_ELFIN_FOMAT_FAILED=102 "
        "LIBSYM_ERR_FILE_INVALID=116 LIBSYM_ERR_FILE_NOT_RGE=113 LIBSYM_ERR_KALLSYMS_INVALID=100 "
        "LIBSYM_ERR_MAP_ADDR_MODULE_FAILED=105 LIBSYM_ERR_MAP_CODE_FIND_ELF_FAILED=111 "
        "LIBSYM_ERR_MAP_CODE_KERNEL_NOT_SUPPORT=110 LIBSYM_ERR_MAP_KERNAL_ADDR_FAILED=106 "
        "LIBSYM_ERR_NOT_FIND_PID=104 LIBSYM_ERR_OPEN_FILE_FAILED=103 "
        "LIBSYM_ERR_PARAM_PID_INVALID=107 LIBSYM_ERR_READ_BUILDID=117 "
        "LIBSYM_ERR_SNPRINF_OPERATE_FAILED=109 LIBSYM_ERR_START_SMALLER_END=114 "
        "LIBSYM_ERR_STOUL_OPERATE_FAILED=115 LIBSYM_ERR_STRCPY_OPERATE_FAILED=108 SUCCESS=0 "
        "UNKNOWN_ERROR=9999"
    ),
}
# fmt: on
