/*
 * proc_parse.c - libFuzzer target for the /proc parsers of ProcDataRead: `make fuzz`
 * (clang -fsanitize=fuzzer,address,undefined).
 *
 * Input: one byte choosing the source (modulo MAX_PROC_SOURCE), then the file's text, given
 * to the parser in an exact-size buffer so that ASan sees a read one byte past it. Every
 * parse either succeeds with entries that are all readable (each string NUL-terminated
 * inside the arena, each array as long as its count) or fails with PARSE_FAILED, or
 * SOURCE_INVALID for the sources that are not one file's text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "kperf/pcerrc.h"
#include "proc/proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void str(const char *s)
{
	if (!s)
		abort();
	sink += strlen(s);
}

static void fields(const struct ProcField *f, unsigned n)
{
	unsigned i;

	if (n && !f)
		abort();
	for (i = 0; i < n; i++) {
		str(f[i].key);
		str(f[i].value);
	}
}

static void ulls(const unsigned long long *v, unsigned long long n)
{
	unsigned long long i;

	if (n && !v)
		abort();
	for (i = 0; i < n; i++)
		sink += (size_t)v[i];
}

/* touch every string and array of every entry */
static void walk(const struct ProcData *d)
{
	unsigned i, j;

	for (i = 0; i < d->numEntries; i++) {
		switch (d->source) {
		case PROC_STAT:
			str(d->stat[i].cpuName);
			ulls(d->stat[i].intrPerIrq, d->stat[i].numIntrPerIrq);
			ulls(d->stat[i].softirqPerType, d->stat[i].numSoftirqPerType);
			break;
		case PROC_CPUINFO:
			fields(d->cpuinfo[i].fields, d->cpuinfo[i].numFields);
			break;
		case PROC_MEMINFO:
			str(d->meminfo[i].key);
			str(d->meminfo[i].unit);
			break;
		case PROC_VMSTAT:
			str(d->vmstat[i].key);
			break;
		case PROC_NET_DEV:
			str(d->netDev[i].iface);
			break;
		case PROC_DISKSTATS:
			str(d->diskstats[i].device);
			break;
		case PROC_MOUNTS:
			str(d->mounts[i].device);
			str(d->mounts[i].mountPoint);
			str(d->mounts[i].fsType);
			str(d->mounts[i].options);
			break;
		case PROC_SOFTIRQS:
			str(d->softirqs[i].type);
			ulls(d->softirqs[i].perCpu, d->softirqs[i].numCpus);
			break;
		case PROC_SLABINFO:
			str(d->slabinfo[i].name);
			break;
		case PROC_SCHEDSTAT:
			for (j = 0; j < d->schedstat[i].numDomains; j++) {
				str(d->schedstat[i].domains[j].mask);
				ulls(d->schedstat[i].domains[j].values,
				     d->schedstat[i].domains[j].numValues);
			}
			break;
		case PROC_INTERRUPTS:
			str(d->interrupts[i].irq);
			str(d->interrupts[i].description);
			ulls(d->interrupts[i].perCpu, d->interrupts[i].numCpus);
			break;
		case PROC_IRQ_AFFINITY:
			str(d->irqAffinity[i].affinity);
			break;
		case PROC_LOCKS:
			fields(d->locks[i].fields, d->locks[i].numFields);
			break;
		case PROC_ZONEINFO:
			str(d->zoneinfo[i].zone);
			str(d->zoneinfo[i].protection);
			str(d->zoneinfo[i].nodeUnreclaimable);
			str(d->zoneinfo[i].startPfn);
			fields(d->zoneinfo[i].nodeStats, d->zoneinfo[i].numNodeStats);
			fields(d->zoneinfo[i].stats, d->zoneinfo[i].numStats);
			for (j = 0; j < d->zoneinfo[i].numPagesets; j++)
				sink += (size_t)d->zoneinfo[i].pagesets[j].count;
			break;
		case PROC_BUDDYINFO:
			str(d->buddyinfo[i].zone);
			str(d->buddyinfo[i].zoneName);
			ulls(d->buddyinfo[i].orders, d->buddyinfo[i].numOrders);
			break;
		case PROC_NET_SOCKSTAT:
			str(d->netSockstat[i].protocol);
			fields(d->netSockstat[i].fields, d->netSockstat[i].numFields);
			break;
		case PROC_NET_NETSTAT:
			str(d->netNetstat[i].category);
			fields(d->netNetstat[i].fields, d->netNetstat[i].numFields);
			break;
		case PROC_NET_ARP:
			str(d->netArp[i].ipAddress);
			str(d->netArp[i].device);
			break;
		case PROC_VERSION:
			str(d->version[i].version);
			break;
		case PROC_MODULES:
			str(d->modules[i].name);
			str(d->modules[i].usedBy);
			str(d->modules[i].taint);
			break;
		case PROC_FILESYSTEMS:
			str(d->filesystems[i].fsType);
			break;
		case PROC_SCSI:
			str(d->scsi[i].host);
			str(d->scsi[i].channel);
			str(d->scsi[i].id);
			str(d->scsi[i].lun);
			str(d->scsi[i].vendor);
			str(d->scsi[i].model);
			str(d->scsi[i].rev);
			str(d->scsi[i].type);
			str(d->scsi[i].ansiScsiRevision);
			break;
		case PROC_PRESSURE_CPU:
		case PROC_PRESSURE_IO:
			str(d->pressure[i].type);
			break;
		case PROC_PID_STAT:
			str(d->pidStat[i].comm);
			break;
		case PROC_PID_STATUS:
			fields(d->pidStatus[i].fields, d->pidStatus[i].numFields);
			break;
		case PROC_PID_SMAPS_ROLLUP:
			fields(d->pidSmapsRollup[i].fields, d->pidSmapsRollup[i].numFields);
			break;
		case PROC_PID_NUMA_MAPS:
			str(d->pidNumaMaps[i].address);
			fields(d->pidNumaMaps[i].fields, d->pidNumaMaps[i].numFields);
			break;
		case PROC_PID_SMAPS:
			str(d->pidSmaps[i].mapping);
			fields(d->pidSmaps[i].fields, d->pidSmaps[i].numFields);
			break;
		case PROC_PID_ENVIRON:
			str(d->pidEnviron[i].name);
			str(d->pidEnviron[i].value);
			break;
		case PROC_PID_CMDLINE:
			str(d->pidCmdline[i].cmdline);
			break;
		case PROC_PID_LIMITS:
			str(d->pidLimits[i].limit);
			str(d->pidLimits[i].soft);
			str(d->pidLimits[i].hard);
			str(d->pidLimits[i].units);
			break;
		case PROC_PID_STACK:
			str(d->pidStack[i].address);
			str(d->pidStack[i].symbol);
			break;
		case PROC_PID_WCHAN:
			str(d->pidWchan[i].wchan);
			break;
		case PROC_PID_MAPS:
			str(d->pidMaps[i].start);
			str(d->pidMaps[i].end);
			str(d->pidMaps[i].perms);
			str(d->pidMaps[i].offset);
			str(d->pidMaps[i].dev);
			str(d->pidMaps[i].inode);
			str(d->pidMaps[i].pathname);
			break;
		case PROC_PID_COMM:
			str(d->pidComm[i].comm);
			break;
		case PROC_PID_TASK_STAT:
			str(d->pidTaskStat[i].comm);
			break;
		default:
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_proc_arena arena = { 0 };
	struct ProcData out = { 0 };
	int src, err;
	char *text;

	if (!size)
		return 0;
	src = data[0] % MAX_PROC_SOURCE;
	text = malloc(size);
	if (!text)
		abort();
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	out.source = (enum ProcSource)src;
	kp_clear();
	err = kp_proc_parse(&arena, src, text, size - 1, &out);
	if (err) {
		if (kp_proc_parser(src) ? Perrorno() != LIBPERF_ERR_PROC_PARSE_FAILED :
					  Perrorno() != LIBPERF_ERR_PROC_SOURCE_INVALID)
			abort();
	} else {
		walk(&out);
	}
	free(text);
	kp_proc_arena_free(&arena);
	return 0;
}
