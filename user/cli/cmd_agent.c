/*
 * cmd_agent.c - `kperf-bpf agent`: serve Prometheus metrics and pprof profiles over HTTP
 * (user/agent) until SIGTERM.
 */
#include "agent/agent.h"
#include "cli.h"

int cmd_agent(int argc, char **argv)
{
	struct agent_config c;
	int rc;

	agent_config_defaults(&c);
	rc = agent_config_parse(&c, argc, argv);
	if (rc) {
		agent_config_free(&c);
		return rc > 0 ? 0 : 2;
	}
	rc = agent_run(&c);
	agent_config_free(&c);
	return rc;
}
