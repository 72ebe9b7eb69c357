/*
 * pcerrc.h - error and warning codes of libkperf-bpf.
 *
 * The numbering follows libkperf so that code written against libkperf keeps working:
 * 0 is success, 1 is out of memory, 100-999 come from the symbol resolver, 1000-2999
 * from the collector. kperf-bpf's own codes start at 2000 and are named in the same style.
 * After any call that fails, Perrorno() gives the code and Perror() a sentence that says
 * what was wrong and what to do about it. The error state is per thread.
 */
#ifndef KPERF_PCERRC_H
#define KPERF_PCERRC_H

#ifdef __cplusplus
extern "C" {
#endif

#define SUCCESS 0
#define COMMON_ERR_NOMEM 1

/* symbol resolver */
#define LIBSYM_ERR_BASE 100
#define LIBSYM_ERR_KALLSYMS_INVALID 100
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

/* collector (libkperf numbering) */
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

/* kperf-bpf additions */
#define LIBPERF_ERR_INVALID_SYSCALL 2000 /* a syscall name the kernel does not have */
#define LIBPERF_ERR_NO_BTF 2001 /* the kernel has no BTF and no fallback works */
#define LIBPERF_ERR_BPF_LOAD 2002 /* the verifier or the kernel refused a program */
#define LIBPERF_ERR_BPF_ATTACH 2003 /* a program could not be attached */
#define LIBPERF_ERR_INVALID_ATTR 2004 /* an attribute is out of range or inconsistent */
#define LIBPERF_ERR_INVALID_CGROUP 2005 /* the cgroup path is not a cgroup v2 directory */
#define LIBPERF_ERR_PMU_NOT_PRESENT 2006 /* a hardware/uncore PMU this machine lacks */
#define LIBPERF_ERR_INVALID_FIELD 2007 /* a tracepoint field that does not exist */
#define LIBPERF_ERR_BUFFER_TOO_SMALL 2008 /* a value buffer smaller than the field */
#define LIBPERF_ERR_INVALID_FORMAT 2009 /* a malformed tracefs format file */
#define LIBPERF_ERR_NO_TRACEFS 2010 /* tracefs is neither mounted nor mountable */
#define LIBPERF_ERR_INVALID_ID 2011 /* a core, numa node or cluster that does not exist */
#define LIBPERF_ERR_IO 2012 /* reading or writing a file failed */
#define LIBPERF_ERR_INVALID_ARG 2013 /* a NULL pointer or a value out of range */
#define LIBPERF_ERR_NOT_ENABLED 2014 /* an operation that needs an enabled task */

#define UNKNOWN_ERROR 9999

/* warnings: the call succeeded, but something the caller should know happened */
#define LIBPERF_WARN_CTXID_LOST 1000
#define LIBPERF_WARN_FAIL_GET_PROC 1001
#define LIBPERF_WARN_RECORDS_DROPPED 2100 /* per-call or per-sample records were lost */
#define LIBPERF_WARN_FALLBACK 2101 /* a fallback (no BTF, no task storage) is in use */
#define LIBPERF_WARN_SUMMARY_FULL 2102 /* the in-kernel summary map ran out of entries */
#define LIBPERF_WARN_PROC_EXITED 2103 /* a traced process exited */

/* the code of the last failed call of this thread, SUCCESS when the last call succeeded */
int Perrorno(void);
/* the message of the last failed call of this thread; never NULL */
const char *Perror(void);
/* the warning of the last call of this thread, SUCCESS when there is none */
int GetWarn(void);
/* the warning message of the last call of this thread; "" when there is none */
const char *GetWarnMsg(void);

#ifdef __cplusplus
}
#endif
#endif
