/*
 * test_agent_workload.c - the agent's workload identity from cgroup paths (container
 * runtimes' scopes, the kubelet's two drivers) and the pod names from a kubelet log layout
 * made in a temporary directory; and the label escaping of the exposition.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"

#define CID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b"
#define UID_ "6f1c2a3b_4d5e_4f60_8a9b_0c1d2e3f4a5b"

Test(agent_workload, systemd_driver_containerd)
{
	struct agent_identity id;

	agent_identity_from_path(
		"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		".slice/cri-containerd-" CID ".scope",
		NULL, &id);
	cr_assert_str_eq(id.pod_uid, UID);
	cr_assert_str_eq(id.container_id, CID);
	cr_assert_str_eq(id.k8s_pod, "");
}

Test(agent_workload, cgroupfs_driver_and_runtimes)
{
	struct agent_identity id;

	agent_identity_from_path("/kubepods/besteffort/pod" UID "/" CID, NULL, &id);
	cr_assert_str_eq(id.pod_uid, UID);
	cr_assert_str_eq(id.container_id, CID);
	agent_identity_from_path("/system.slice/docker-" CID ".scope", NULL, &id);
	cr_assert_str_eq(id.container_id, CID);
	cr_assert_str_eq(id.pod_uid, "");
	agent_identity_from_path("/machine.slice/libpod-" CID ".scope/container", NULL, &id);
	cr_assert_str_eq(id.container_id, CID);
	/* not an id: too short, upper case, no pod prefix */
	agent_identity_from_path("/docker-0123.scope/" UID "/POD" UID, NULL, &id);
	cr_assert_str_eq(id.container_id, "");
	cr_assert_str_eq(id.pod_uid, "");
	cr_assert_str_eq(id.cgroup, "/docker-0123.scope/" UID "/POD" UID);
}

Test(agent_workload, names_from_the_kubelet_logs)
{
	char dir[] = "/tmp/kperf-kubelet-XXXXXX", path[512];
	struct agent_identity id;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/pods", dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/pods/shop_cart-7d9f_" UID, dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/containers", dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/containers/cart-7d9f_shop_api-" CID ".log", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fclose(f);
	agent_identity_from_path("/kubepods/pod" UID "/" CID, dir, &id);
	cr_assert_str_eq(id.k8s_namespace, "shop");
	cr_assert_str_eq(id.k8s_pod, "cart-7d9f");
	cr_assert_str_eq(id.k8s_container, "api");
	unlink(path);
	snprintf(path, sizeof(path), "%s/containers", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/pods/shop_cart-7d9f_" UID, dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/pods", dir);
	rmdir(path);
	rmdir(dir);
}

Test(agent_workload, label_escaping)
{
	char buf[64];

	agent_label_escape("a\"b\\c\nd", buf, sizeof(buf));
	cr_assert_str_eq(buf, "a\\\"b\\\\c\\nd");
	agent_label_escape("0123456789", buf, 6);
	cr_assert_eq(strlen(buf), 3);
}
