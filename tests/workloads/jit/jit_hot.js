// jit_hot.js - the Node workload of kperf-bpf's JIT tests (tests/integration/test_jit.c): the
// time goes to hotLoop(), compiled by V8, until the process has used <seconds> of CPU
// (argv[2], default 3): the same work whatever the load of the machine.
function hotLoop(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s = (s * 31 + i) % 1000003;
	return s;
}

const budget = (Number(process.argv[2]) || 3) * 1e6;
let t = 0;
while (process.cpuUsage().user < budget)
	t += hotLoop(1000000);
console.log(t > 0 ? "done" : "zero");
