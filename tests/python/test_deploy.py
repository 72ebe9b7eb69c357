"""deploy/: the Kubernetes manifests and the image build, checked as files (Debian's kubectl
cannot validate offline: `kubectl apply --dry-run=client` asks an API server for its schema).
Valid YAML; least privilege (the four capabilities, drop ALL, never privileged or
CAP_SYS_ADMIN, read-only root); probes and scrape annotations at endpoints and the port the
agent serves (user/agent/http.c's routes); Dockerfile on Debian 12.
"""

import os
import re

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY = os.path.join(REPO, "deploy")
CAPS = {"BPF", "PERFMON", "SYS_PTRACE", "DAC_READ_SEARCH"}


def load(name):
    with open(os.path.join(DEPLOY, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def served_paths():
    with open(os.path.join(REPO, "user", "agent", "http.c")) as f:
        return set(re.findall(r'strcmp\(url, "([^"]+)"\)', f.read()))


def check_agent_container(c, annotations):
    sc = c["securityContext"]
    assert sc["privileged"] is False
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert set(sc["capabilities"]["add"]) == CAPS
    assert c["resources"]["limits"]["memory"] and c["resources"]["requests"]["memory"]
    paths = served_paths()
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz" in paths
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz" in paths
    port = c["ports"][0]["containerPort"]
    assert c["livenessProbe"]["httpGet"]["port"] == c["ports"][0]["name"]
    assert "agent" == c["args"][0]
    assert f"--listen=0.0.0.0:{port}" in c["args"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(port)
    assert annotations["prometheus.io/path"] == "/metrics" and "/metrics" in paths


def test_daemonset():
    (ds,) = load("daemonset.yaml")
    assert ds["kind"] == "DaemonSet"
    spec = ds["spec"]["template"]["spec"]
    assert spec["hostPID"] is True
    assert "hostNetwork" not in spec
    (c,) = spec["containers"]
    check_agent_container(c, ds["spec"]["template"]["metadata"]["annotations"])
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    assert all(m["readOnly"] for m in mounts.values())
    assert "--kubelet-logs=/host/var/log" in c["args"] and "/host/var/log" in mounts
    # the host's cgroup2 tree, where the agent finds the workloads' paths by cgroup id
    assert "--cgroup-root=/host/sys/fs/cgroup" in c["args"]
    assert "/host/sys/fs/cgroup" in mounts


def test_sidecar():
    (pod,) = load("sidecar.yaml")
    assert pod["kind"] == "Pod" and pod["spec"]["shareProcessNamespace"] is True
    agent = [c for c in pod["spec"]["containers"] if c["name"] == "kperf-bpf"]
    assert len(agent) == 1
    check_agent_container(agent[0], pod["metadata"]["annotations"])


def test_servicemonitor():
    svc, sm = load("servicemonitor.yaml")
    assert svc["kind"] == "Service" and sm["kind"] == "ServiceMonitor"
    assert sm["spec"]["selector"]["matchLabels"] == svc["spec"]["selector"]
    (ep,) = sm["spec"]["endpoints"]
    assert ep["path"] == "/metrics" and ep["port"] == svc["spec"]["ports"][0]["name"]
    (ds,) = load("daemonset.yaml")
    assert svc["spec"]["selector"] == ds["spec"]["selector"]["matchLabels"]


def test_dockerfile():
    with open(os.path.join(DEPLOY, "Dockerfile")) as f:
        text = f.read()
    froms = re.findall(r"^FROM (\S+)", text, re.M)
    assert froms and all(f.startswith("debian:12") for f in froms)
    assert "libmicrohttpd-dev" in text and "libmicrohttpd12" in text
    assert 'ENTRYPOINT ["/usr/bin/kperf-bpf"]' in text
