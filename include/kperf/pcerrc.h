/*
 * pcerrc.h - error and warning codes, with libkperf's names and numbers.
 *
 * Every code libkperf defines is here with libkperf's number, and a failure libkperf has a
 * code for gets that code, so a program that tests Perrorno() against libkperf's constants
 * behaves the same on kperf-bpf. 0 is success, 1-99 common, 100-999 the symbol resolver,
 * 1000-1999 the collector. kperf-bpf's own codes (failures libkperf has no code for: the BPF
 * verifier, BTF, cgroup paths, ...) are named KPERF_ERR_* / KPERF_WARN_* and numbered from
 * 2000, so they can never take a name or a number libkperf gives out later.
 * After a failed call, Perrorno() gives the code and Perror() a sentence that says what was
 * wrong and what to do about it. The state is per thread.
 */
#ifndef KPERF_PCERRC_H
#define KPERF_PCERRC_H

#ifdef __cplusplus
extern "C" {
#endif

/* common */
#define SUCCESS 0
#define COMMON_ERR_NOMEM 1
#define COMMON_ERR_WRITE 2

/* symbol resolver (symbol.h) */
#define LIBSYM_ERR_BASE 100
#define LIBSYM_ERR_KALLSYMS_INVALID LIBSYM_ERR_BASE
#define LIBSYM_ERR_DWARF_FORMAT_FAILED 101
#define LIBSYM_ERR_ELFIN_FOMAT_FAILED 102
#define LIBSYM_ERR_OPEN_FILE_FAILED 103
#define LIBSYM_ERR_NOT_FIND_PID 104
#define LIBSYM_ERR_MAP_ADDR_MODULE_FAILED 105
#define LIBSYM_ERR_MAP_KERNAL_ADDR_FAILED 106
#define LIBSYM_ERR_PARAM_PID_INVALID 107
#define LIBSYM_ERR_STRCPY_OPERATE_FAILED 108
#define LIBSYM_ERR_SNPRINF_OPERATE_FAILED 109
#define LIBSYM_ERR_MAP_CODE_KERNEL_NOT_SUPPORT 110
#define LIBSYM_ERR_MAP_CODE_FIND_ELF_FAILED 111
#define LIBSYM_ERR_CMD_OPERATE_FAILED 112
#define LIBSYM_ERR_FILE_NOT_RGE 113
#define LIBSYM_ERR_START_SMALLER_END 114
#define LIBSYM_ERR_STOUL_OPERATE_FAILED 115
#define LIBSYM_ERR_FILE_INVALID 116
#define LIBSYM_ERR_READ_BUILDID 117
#define LIBSYM_ERR_BUILDID_TOO_LONG 118
#define LIBSYM_ERR_ASM_RESOLVE_FAILED 119

/* collector (pmu.h) */
#define LIBPERF_ERR_NO_AVAIL_PD 1000
#define LIBPERF_ERR_CHIP_TYPE_INVALID 1001
#define LIBPERF_ERR_FAIL_LISTEN_PROC 1002
#define LIBPERF_ERR_INVALID_CPULIST 1003
#define LIBPERF_ERR_INVALID_PIDLIST 1004
#define LIBPERF_ERR_INVALID_EVTLIST 1005
#define LIBPERF_ERR_INVALID_PD 1006
#define LIBPERF_ERR_INVALID_EVENT 1007
#define LIBPERF_ERR_SPE_UNAVAIL 1008
#define LIBPERF_ERR_FAIL_GET_CPU 1009
#define LIBPERF_ERR_FAIL_GET_PROC 1010
#define LIBPERF_ERR_NO_PERMISSION 1011
#define LIBPERF_ERR_DEVICE_BUSY 1012
#define LIBPERF_ERR_DEVICE_INVAL 1013
#define LIBPERF_ERR_FAIL_MMAP 1014
#define LIBPERF_ERR_FAIL_RESOLVE_MODULE 1015
#define LIBPERF_ERR_KERNEL_NOT_SUPPORT 1016
#define LIBPERF_ERR_INVALID_METRIC_TYPE 1017
#define LIBPERF_ERR_INVALID_PID 1018
#define LIBPERF_ERR_INVALID_TASK_TYPE 1019
#define LIBPERF_ERR_INVALID_TIME 1020
#define LIBPERF_ERR_NO_PROC 1021
#define LIBPERF_ERR_TOO_MANY_FD 1022
#define LIBPERF_ERR_RAISE_FD 1023
#define LIBPERF_ERR_INVALID_PMU_DATA 1024
#define LIBPERF_ERR_FAILED_PMU_ENABLE 1025
#define LIBPERF_ERR_FAILED_PMU_DISABLE 1026
#define LIBPERF_ERR_FAILED_PMU_RESET 1027
#define LIBPERF_ERR_NOT_OPENED 1028
#define LIBPERF_ERR_QUERY_EVENT_TYPE_INVALID 1029
#define LIBPERF_ERR_QUERY_EVENT_LIST_FAILED 1030
#define LIBPERF_ERR_PATH_INACCESSIBLE 1031
#define LIBPERF_ERR_INVALID_SAMPLE_RATE 1032
#define LIBPERF_ERR_INVALID_FIELD_ARGS 1033
#define LIBPERF_ERR_FIND_FIELD_LOSS 1034
#define LIBPERF_ERR_COUNT_OVERFLOW 1035
#define LIBPERF_ERR_INVALID_GROUP_SPE 1036
#define LIBPERF_ERR_INVALID_GROUP_ALL_UNCORE 1037
#define LIBPERF_ERR_INVALID_TRACE_TYPE 1038
#define LIBPERF_ERR_INVALID_SYSCALL_FUN 1039
#define LIBPERF_ERR_QUERY_SYSCALL_LIST_FAILED 1040
#define LIBPERF_ERR_OPEN_SYSCALL_HEADER_FAILED 1041
#define LIBPERF_ERR_INVALID_BRANCH_SAMPLE_FILTER 1042
#define LIBPERF_ERR_BRANCH_JUST_SUPPORT_SAMPLING 1043
#define LIBPERF_ERR_RESET_FD 1044
#define LIBPERF_ERR_SET_FD_RDONLY_NONBLOCK 1045
#define LIBPERF_ERR_NOT_SUPPORT_CONFIG_EVENT 1046
#define LIBPERF_ERR_INVALID_BLOCKED_SAMPLE 1047
#define LIBPERF_ERR_NOT_SUPPORT_GROUP_EVENT 1048
#define LIBPERF_ERR_NOT_SUPPORT_SYSTEM_SAMPLE 1049
#define LIBPERF_ERR_INVALID_PMU_DEVICES_METRIC 1050
#define LIBPERF_ERR_INVALID_PMU_DEVICES_BDF 1051
#define LIBPERF_ERR_OPEN_INVALID_FILE 1052
#define LIBPERF_ERR_INVALID_BDF_VALUE 1053
#define LIBPERF_ERR_NOT_SUPPORT_PCIE_BDF 1054
#define LIBPERF_ERR_NOT_SUPPORT_SMMU_BDF 1055
#define LIBPERF_ERR_INVALID_IOSMMU_DIR 1056
#define LIBPERF_ERR_INVALID_SMMU_NAME 1057
#define LIBPERF_ERR_NOT_SUPPORT_PCIE_COUNTING 1058
#define LIBPERF_ERR_OPEN_PCI_FILE_FAILD 1059
#define LIBPERF_ERR_INVALID_MTRIC_PARAM 1060
#define LIBPERF_ERR_PMU_DEVICES_NULL 1061
#define LIBPERF_ERR_CPUFREQ_NOT_CONFIG 1062
#define LIBPERF_ERR_CLUSTER_ID_OVERSIZE 1063
#define LIBPERF_ERR_INVALID_PMU_BDF_TYPE 1064
#define LIBPERF_ERR_INTERFACE_NOT_SUPPORT_X86 1065
#define LIBPERF_ERR_NOT_SUPPORT_METRIC 1066
#define LIBPERF_ERR_INVALID_CPU_FREQ_PERIOD 1067
#define LIBPERF_ERR_PMU_DATA_NO_FOUND 1068
#define LIBPERF_ERR_INVALID_CGROUP_LIST 1069
#define LIBPERF_ERR_NOT_SUPPORT_PMU_FILE 1070
#define LIBPERF_ERR_INVALID_PMU_FILE 1071
#define LIBPERF_ERR_NOT_SUPPORT_PCIE_PORT 1072
#define LIBPERF_ERR_INVALID_EVTATTR 1073
#define LIBPERF_ERR_COUNT_MMAP_IS_NULL 1074
#define LIBPERF_ERR_ENABLE_USER_ACCESS_FAILED 1075
#define LIBPERF_ERR_ALLOCATE_REGISTER_FAILED 1076
#define LIBPERF_ERR_CHECK_USER_ACCESS 1077
#define LIBPERF_ERR_COUNTER_INDEX_IS_ZERO 1078
#define LIBPERF_ERR_BPF_ACT_FAILED 1079
#define LIBPERF_ERR_INVALID_BPF_PARAM 1080
#define LIBPERF_ERR_NULL_POINTER 1081
#define LIBPERF_ERR_BUFFER_CORRUPTED 1082
#define LIBPERF_ERR_NOT_SUPPORT_HWMETRIC 1083
#define LIBPERF_ERR_INVALID_HWMETRIC_ATTR 1084
#define LIBPERF_ERR_INVALID_MIN_LATENCY 1085
#define LIBPERF_ERR_INVALID_EVT_FILTER 1086
#define LIBPERF_ERR_INVALID_DATA_FILTER 1087
#define LIBPERF_ERR_NOT_SUPPORT_EXEC_ON 1088
#define LIBPERF_ERR_NOT_SUPPORT_PER_THREAD 1089
#define LIBPERF_ERR_UTRACE_ELF_SCAN_FAILED 1090
#define LIBPERF_ERR_UTRACE_PROBE_REGISTER_FAILED 1091
#define LIBPERF_ERR_LBR_DRIVER_INVALID 1092
#define LIBPERF_ERR_UTRACE_JAVA_PROCESS_FAILED 1093
#define LIBPERF_ERR_PROC_FILE_NOT_FOUND 1094
#define LIBPERF_ERR_PROC_READ_FAILED 1095
#define LIBPERF_ERR_PROC_PARSE_FAILED 1096
#define LIBPERF_ERR_PROC_DATA_NULL 1097
#define LIBPERF_ERR_PROC_SOURCE_INVALID 1098
#define LIBPERF_ERR_KERNEL_TRACE_FAILED 1099
#define LIBPERF_ERR_INVALID_TRACE_CONF 1100

/* kperf-bpf's own codes: failures libkperf has no code for. The ones marked "not returned"
 * named failures for which libkperf has a code, which is now returned instead; they stay
 * defined so that programs naming them still compile. */
#define KPERF_ERR_BASE 2000
#define KPERF_ERR_NO_BTF 2001 /* the kernel has no BTF and no fallback works */
#define KPERF_ERR_BPF_LOAD 2002 /* LIBPERF_ERR_BPF_ACT_FAILED instead (UTraceOpen still) */
#define KPERF_ERR_BPF_ATTACH 2003 /* not returned: LIBPERF_ERR_BPF_ACT_FAILED */
#define KPERF_ERR_INVALID_ATTR 2004 /* an option is out of range or inconsistent */
#define KPERF_ERR_INVALID_CGROUP 2005 /* not returned: LIBPERF_ERR_INVALID_CGROUP_LIST */
#define KPERF_ERR_PMU_NOT_PRESENT 2006 /* not returned: the perf_event_open code (see README) */
#define KPERF_ERR_INVALID_FORMAT 2009 /* a malformed tracefs format file */
#define KPERF_ERR_NO_TRACEFS 2010 /* not returned: LIBPERF_ERR_INVALID_EVENT */
#define KPERF_ERR_INVALID_ID 2011 /* a cpu or socket that does not exist */
#define KPERF_ERR_IO 2012 /* not returned: COMMON_ERR_WRITE */
#define KPERF_ERR_INVALID_ARG 2013 /* a value out of range libkperf has no code for */
#define KPERF_ERR_NOT_ENABLED 2014 /* an operation that needs an enabled task */
#define KPERF_ERR_INVALID_BDF 2015 /* not returned: LIBPERF_ERR_INVALID_BDF_VALUE and others */
#define KPERF_ERR_NOT_SUPPORTED 2016 /* a libkperf option kperf-bpf does not implement */
#define KPERF_ERR_PROC_PIDNS 2021 /* /proc belongs to another PID namespace than the caller's */

#define UNKNOWN_ERROR 9999

/* warnings: the call succeeded, but something the caller should know happened (GetWarn) */
#define LIBSYM_WARN_LOAD_DWARF_FAILED 100
#define LIBPERF_WARN_CTXID_LOST 1000
#define LIBPERF_WARN_FAIL_GET_PROC 1001
#define LIBPERF_WARN_INVALID_GROUP_HAS_UNCORE 1002
#define LIBPERF_WARN_PCIE_BIOS_NOT_NEWEST 1003
#define LIBPERF_WARN_INVALID_SMMU_BDF 1004
#define LIBPERF_WARN_UTRACE_ELF_SCAN_FAILED 1005
#define LIBPERF_WARN_LBR_DRIVER_START_FAILED 1006
#define LIBPERF_WARN_UTRACE_KERNEL_FAILED 1007
#define LIBPERF_WARN_UTRACE_NATIVE_READ_FAILED 1008
#define KPERF_WARN_RECORDS_DROPPED 2100 /* per-call or per-sample records were lost */
#define KPERF_WARN_FALLBACK 2101 /* a fallback (no BTF, no task storage) is in use */
#define KPERF_WARN_SUMMARY_FULL 2102 /* the in-kernel summary map ran out of entries */
#define KPERF_WARN_PROC_EXITED 2103 /* a traced process exited */
#define KPERF_WARN_SYM_INCOMPLETE 2104 /* a mapped file could not be read: [unknown] */
#define KPERF_WARN_NO_PROBES \
	2110 /* no file of the collected processes holds kperf's USDT
				   * marker probes (mstx.h): no markers will come */

/* the code of the last failed call of this thread, SUCCESS when the last call succeeded */
int Perrorno(void);
/* the message of the last failed call of this thread; never NULL */
const char *Perror(void);
/* the warning of the last call of this thread, SUCCESS when there is none */
int GetWarn(void);
/* the warning message of the last call of this thread; "" when there is none. A call with
 * several warnings has each on a line of its own (GetWarn is the latest's code). */
const char *GetWarnMsg(void);

#ifdef __cplusplus
}
#endif
#endif
