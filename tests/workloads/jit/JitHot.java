// JitHot - the JVM workload of kperf-bpf's JIT tests (tests/integration/test_jit.c): the time
// goes to hotLoop(), compiled by the JIT. "JitHot N" runs it N times and exits; "JitHot 0"
// prints "ready" once it has run long enough to be compiled, then runs it until killed.
public class JitHot {
    static long hotLoop(long n) {
        long s = 0;
        for (long i = 0; i < n; i++)
            s = (s * 31 + i) % 1000003;
        return s;
    }

    public static void main(String[] args) {
        long n = args.length > 0 ? Long.parseLong(args[0]) : 600, t = 0;

        for (long i = 0; n == 0 || i < n; i++) {
            t += hotLoop(1000000);
            if (n == 0 && i == 200)
                System.out.println("ready");
        }
        System.out.println(t > 0 ? "done" : "zero");
    }
}
