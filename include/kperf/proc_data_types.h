/*
 * proc_data_types.h - placeholder until the ProcDataRead module lands: the structs of
 * libkperf's proc_data_types.h.
 */
#ifndef KPERF_PROC_DATA_TYPES_H
#define KPERF_PROC_DATA_TYPES_H
struct ProcData;
#endif
