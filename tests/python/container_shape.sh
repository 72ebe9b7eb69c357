#!/bin/sh
# container_shape.sh TRACEFS CMD...: runs CMD the way a container runtime starts a
# least-privileged kperf-bpf, in the mount and PID namespaces `unshare --pid --fork
# --mount-proc` made for it (test_pidns.py): a fresh read-only sysfs on /sys (so
# /sys/kernel/tracing is an empty directory, as in a container), a cgroup2 mount on
# /sys/fs/cgroup, the host's tracefs bound back into /sys/kernel/tracing when TRACEFS is
# "bind" (a DaemonSet's hostPath volume) and left out when it is "none", and only the
# agent's four capabilities: CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH.
set -eu
mode=$1
shift
case $mode in bind | none) ;; *)
	echo "container_shape.sh: TRACEFS must be bind or none, not '$mode'" >&2
	exit 2
	;;
esac
# unshare made the mounts private: nothing here reaches the host's mount namespace
host=$(mktemp -d /tmp/kperf-tracefs.XXXXXX)
mount --bind /sys/kernel/tracing "$host"
# a sysfs of its own on /sys (made beside it and moved there: the kernel refuses to mount the
# superblock /sys already shows, this network namespace's, on /sys itself), then made
# read-only for this mount alone
sys=$(mktemp -d /tmp/kperf-sysfs.XXXXXX)
mount -t sysfs -o nosuid,nodev,noexec container-sysfs "$sys"
mount --move "$sys" /sys
rmdir "$sys"
mount -o remount,bind,ro /sys
mount -t cgroup2 -o nosuid,nodev,noexec container-cgroup /sys/fs/cgroup
if [ "$mode" = bind ]; then
	mount --bind "$host" /sys/kernel/tracing
fi
umount "$host"
rmdir "$host"
exec setpriv --inh-caps=-all --bounding-set=-all,+bpf,+perfmon,+sys_ptrace,+dac_read_search \
	"$@"
