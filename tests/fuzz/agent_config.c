/*
 * agent_config.c - libFuzzer target for the agent's --config file ("key = value" lines, keys
 * as the long options, read at start and on every SIGHUP): `make fuzz`, and a short run in
 * `make test`. The file is read through a memfd, as the agent reads any file.
 *
 * Reading succeeds, or fails with one message naming the file and line; either way the
 * options then pass or fail agent_config_check, and are freed without a leak (LeakSanitizer);
 * nothing is read past a value (ASan).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/agent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct agent_config c;
	char path[64], err[512] = "";
	int rc;

	if (fd < 0 && (fd = memfd_create("agent_config", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	agent_config_defaults(&c);
	rc = agent_config_file(&c, path, err, sizeof(err));
	if (rc && (rc != -1 || strncmp(err, path, strlen(path))))
		abort();
	if (!rc && agent_config_check(&c, err, sizeof(err)) && !*err)
		abort();
	agent_config_free(&c);
	return 0;
}
