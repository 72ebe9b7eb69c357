/*
 * sys_misc.c - parsers of the network, storage and kernel-inventory files: /proc/net/dev,
 * net/sockstat, net/netstat, net/arp, diskstats, mounts, locks, version, modules,
 * filesystems and scsi/scsi.
 */
#include <errno.h>
#include <string.h>

#include "proc.h"

/* Two header lines, then "iface: 8 receive counters 8 transmit counters". */
int kp_proc_parse_net_dev(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line, *iface, *rest;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcNetDevEntry *e;
		char *w[16] = { 0 };

		if (!kp_proc_colon(line, &iface, &rest))
			continue;
		kp_proc_words(&rest, w, 16);
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->iface = kp_proc_strdup(a, iface)))
			return -ENOMEM;
		e->rxBytes = kp_proc_ull(w[0]);
		e->rxPackets = kp_proc_ull(w[1]);
		e->rxErrs = kp_proc_ull(w[2]);
		e->rxDrop = kp_proc_ull(w[3]);
		e->rxFifo = kp_proc_ull(w[4]);
		e->rxFrame = kp_proc_ull(w[5]);
		e->rxCompressed = kp_proc_ull(w[6]);
		e->rxMulticast = kp_proc_ull(w[7]);
		e->txBytes = kp_proc_ull(w[8]);
		e->txPackets = kp_proc_ull(w[9]);
		e->txErrs = kp_proc_ull(w[10]);
		e->txDrop = kp_proc_ull(w[11]);
		e->txFifo = kp_proc_ull(w[12]);
		e->txColls = kp_proc_ull(w[13]);
		e->txCarrier = kp_proc_ull(w[14]);
		e->txCompressed = kp_proc_ull(w[15]);
	}
	if (!v.n)
		return -ENODATA;
	out->netDev = v.items;
	out->numEntries = v.n;
	return 0;
}

/* "TCP: inuse 1 orphan 0 ...": name/value word pairs; an odd last word gets value "". */
int kp_proc_parse_sockstat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line, *proto, *rest;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct kp_proc_vec fields = { 0 };
		struct ProcNetSockstatEntry *e;
		char *name;

		if (!kp_proc_colon(line, &proto, &rest))
			continue;
		while ((name = kp_proc_word(&rest)))
			if (kp_proc_push_field(a, &fields, name, kp_proc_word(&rest)))
				return -ENOMEM;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->protocol = kp_proc_strdup(a, proto)))
			return -ENOMEM;
		e->fields = fields.items;
		e->numFields = fields.n;
	}
	if (!v.n)
		return -ENODATA;
	out->netSockstat = v.items;
	out->numEntries = v.n;
	return 0;
}

/* Line pairs "Cat: name name ..." / "Cat: value value ...", zipped up to the shorter. */
int kp_proc_parse_netstat(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line, *header = NULL, *category = NULL;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct kp_proc_vec fields = { 0 };
		struct ProcNetNetstatEntry *e;
		char *first = kp_proc_word(&line), *name, *value;
		size_t n;

		if (!first)
			continue;
		if (!header) {
			n = strlen(first);
			if (n && first[n - 1] == ':')
				first[n - 1] = '\0';
			category = first;
			header = line;
			continue;
		}
		while ((name = kp_proc_word(&header)) && (value = kp_proc_word(&line)))
			if (kp_proc_push_field(a, &fields, name, value))
				return -ENOMEM;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->category = kp_proc_strdup(a, category)))
			return -ENOMEM;
		e->fields = fields.items;
		e->numFields = fields.n;
		header = NULL;
	}
	if (!v.n)
		return -ENODATA;
	out->netNetstat = v.items;
	out->numEntries = v.n;
	return 0;
}

int kp_proc_parse_arp(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;
	bool header = true;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcNetArpEntry *e;
		char *w[6];

		if (!*kp_proc_trim(line))
			continue;
		if (header) {
			header = false;
			continue;
		}
		if (kp_proc_words(&line, w, 6) < 6)
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->ipAddress = kp_proc_strdup(a, w[0])) ||
		    !(e->hwType = kp_proc_strdup(a, w[1])) ||
		    !(e->flags = kp_proc_strdup(a, w[2])) ||
		    !(e->hwAddress = kp_proc_strdup(a, w[3])) ||
		    !(e->mask = kp_proc_strdup(a, w[4])) || !(e->device = kp_proc_strdup(a, w[5])))
			return -ENOMEM;
	}
	if (!v.n)
		return -ENODATA;
	out->netArp = v.items;
	out->numEntries = v.n;
	return 0;
}

/* "major minor name" and 4 to 17 counters depending on the kernel (missing ones are 0). */
int kp_proc_parse_diskstats(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcDiskstatsEntry *e;
		char *w[20] = { 0 };

		if (kp_proc_words(&line, w, 20) < 3)
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->device = kp_proc_strdup(a, w[2])))
			return -ENOMEM;
		e->major = kp_proc_int(w[0]);
		e->minor = kp_proc_int(w[1]);
		e->readsCompleted = kp_proc_ull(w[3]);
		e->readsMerged = kp_proc_ull(w[4]);
		e->sectorsRead = kp_proc_ull(w[5]);
		e->msReading = kp_proc_ull(w[6]);
		e->writesCompleted = kp_proc_ull(w[7]);
		e->writesMerged = kp_proc_ull(w[8]);
		e->sectorsWritten = kp_proc_ull(w[9]);
		e->msWriting = kp_proc_ull(w[10]);
		e->iosInProgress = kp_proc_ull(w[11]);
		e->msIos = kp_proc_ull(w[12]);
		e->weightedMsIos = kp_proc_ull(w[13]);
		e->discardsCompleted = kp_proc_ull(w[14]);
		e->discardsMerged = kp_proc_ull(w[15]);
		e->sectorsDiscarded = kp_proc_ull(w[16]);
		e->msDiscarding = kp_proc_ull(w[17]);
		e->flushCompleted = kp_proc_ull(w[18]);
		e->msFlushing = kp_proc_ull(w[19]);
	}
	if (!v.n)
		return -ENODATA;
	out->diskstats = v.items;
	out->numEntries = v.n;
	return 0;
}

int kp_proc_parse_mounts(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcMountsEntry *e;
		char *w[6];

		if (kp_proc_words(&line, w, 6) < 6)
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->device = kp_proc_strdup(a, w[0])) ||
		    !(e->mountPoint = kp_proc_strdup(a, w[1])) ||
		    !(e->fsType = kp_proc_strdup(a, w[2])) ||
		    !(e->options = kp_proc_strdup(a, w[3])))
			return -ENOMEM;
		e->dump = kp_proc_int(w[4]);
		e->passVal = kp_proc_int(w[5]);
	}
	if (!v.n)
		return -ENODATA;
	out->mounts = v.items;
	out->numEntries = v.n;
	return 0;
}

/*
 * As libkperf: a blank-line separated block of "N: rest of line" lines is one entry, so
 * the kernel's /proc/locks (no blank lines) is one entry with a field per lock, the key
 * the lock's number ("1", and "1" again for a "1: ->" waiter).
 */
int kp_proc_parse_locks(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 }, fields;
	char *cur = text;
	int more;

	(void)len;
	while ((more = kp_proc_field_block(a, &cur, &fields)) > 0) {
		struct ProcLocksEntry *e = kp_proc_push(a, &v, sizeof(*e));

		if (!e)
			return -ENOMEM;
		e->numFields = fields.n;
		e->fields = fields.items;
	}
	if (more < 0)
		return more;
	if (!v.n)
		return -ENODATA;
	out->locks = v.items;
	out->numEntries = v.n;
	return 0;
}

int kp_proc_parse_version(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct ProcVersionEntry *e;

	(void)len;
	text = kp_proc_trim(text);
	if (!*text)
		return -ENODATA;
	e = kp_proc_alloc(a, sizeof(*e));
	if (!e || !(e->version = kp_proc_strdup(a, text)))
		return -ENOMEM;
	out->version = e;
	out->numEntries = 1;
	return 0;
}

/* "name size refcount users state address [taint]"; a missing column is "". */
int kp_proc_parse_modules(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcModulesEntry *e;
		char *w[7] = { 0 };

		if (!kp_proc_words(&line, w, 7))
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || !(e->name = kp_proc_strdup(a, w[0])) ||
		    !(e->usedBy = kp_proc_strdup(a, w[3])) ||
		    !(e->state = kp_proc_strdup(a, w[4])) ||
		    !(e->address = kp_proc_strdup(a, w[5])) ||
		    !(e->taint = kp_proc_strdup(a, w[6])))
			return -ENOMEM;
		e->size = kp_proc_ull(w[1]);
		e->usedCount = kp_proc_int(w[2]);
	}
	if (!v.n)
		return -ENODATA;
	out->modules = v.items;
	out->numEntries = v.n;
	return 0;
}

/* "nodev<TAB>proc" or "<TAB>ext4". */
int kp_proc_parse_filesystems(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcFilesystemsEntry *e;

		line = kp_proc_trim(line);
		if (!*line)
			continue;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e)
			return -ENOMEM;
		if (kp_proc_prefix(line, "nodev") && (line[5] == ' ' || line[5] == '\t')) {
			e->nodev = 1;
			line = kp_proc_trim(line + 5);
		}
		e->fsType = kp_proc_strdup(a, line);
		if (!e->fsType)
			return -ENOMEM;
	}
	if (!v.n)
		return -ENODATA;
	out->filesystems = v.items;
	out->numEntries = v.n;
	return 0;
}

/* The text after <label> in <s>, with <s> cut where the label starts; NULL without it. */
static char *after_label(char *s, const char *label)
{
	char *p = s ? strstr(s, label) : NULL;

	if (!p)
		return NULL;
	*p = '\0';
	return p + strlen(label);
}

static int scsi_str(struct kp_proc_arena *a, char **dst, char *s)
{
	*dst = kp_proc_strdup(a, s ? kp_proc_trim(s) : NULL);
	return *dst ? 0 : -ENOMEM;
}

/*
 * Each device is three lines:
 *   Host: scsi0 Channel: 00 Id: 00 Lun: 00
 *     Vendor: ATA      Model: QEMU HARDDISK    Rev: 2.5+
 *     Type:   Direct-Access                    ANSI  SCSI revision: 05
 * A device cut short by the end of the file is left out.
 */
static int scsi_device(struct kp_proc_arena *a, char *host_line, char *vendor_line, char *type_line,
		       struct ProcScsiEntry *e)
{
	char *host = after_label(host_line, "Host:");
	char *channel = after_label(host, "Channel:"), *id = after_label(channel, "Id:");
	char *lun = after_label(id, "Lun:");
	char *vendor = after_label(vendor_line, "Vendor:"), *model = after_label(vendor, "Model:");
	char *rev = after_label(model, "Rev:");
	char *type = after_label(type_line, "Type:"), *ansi = type ? strstr(type, "ANSI") : NULL;
	char *revision = NULL;

	/* "ANSI  SCSI revision: 05": the number when there is one, else the whole phrase */
	if (ansi) {
		revision = ansi;
		if (strchr(ansi, ':')) {
			revision = strchr(ansi, ':') + 1;
			*ansi = '\0';
		}
	}
	if (scsi_str(a, &e->host, host) || scsi_str(a, &e->channel, channel) ||
	    scsi_str(a, &e->id, id) || scsi_str(a, &e->lun, lun) ||
	    scsi_str(a, &e->vendor, vendor) || scsi_str(a, &e->model, model) ||
	    scsi_str(a, &e->rev, rev) || scsi_str(a, &e->type, type) ||
	    scsi_str(a, &e->ansiScsiRevision, revision))
		return -ENOMEM;
	return 0;
}

int kp_proc_parse_scsi(struct kp_proc_arena *a, char *text, size_t len, struct ProcData *out)
{
	struct kp_proc_vec v = { 0 };
	char *cur = text, *line;

	(void)len;
	while ((line = kp_proc_line(&cur))) {
		struct ProcScsiEntry *e;
		char *vendor, *type;

		line = kp_proc_trim(line);
		if (!kp_proc_prefix(line, "Host:"))
			continue;
		vendor = kp_proc_line(&cur);
		type = vendor ? kp_proc_line(&cur) : NULL;
		if (!type)
			break;
		e = kp_proc_push(a, &v, sizeof(*e));
		if (!e || scsi_device(a, line, vendor, type, e))
			return -ENOMEM;
	}
	if (!v.n)
		return -ENODATA;
	out->scsi = v.items;
	out->numEntries = v.n;
	return 0;
}
