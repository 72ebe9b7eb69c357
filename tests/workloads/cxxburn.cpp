// cxxburn - burns CPU in a C++ method, kperf_test::Burner::spin(long), for --ms
// milliseconds of CPU time: its samples must resolve to the demangled name.
//   cxxburn [--ms N] [--wait]   (--wait: start after one byte on stdin)
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

namespace kperf_test
{
class Burner {
    public:
	__attribute__((noinline)) unsigned long spin(long n);
	volatile unsigned long sink = 0;
};

unsigned long Burner::spin(long n)
{
	unsigned long x = 0;

	for (long i = 0; i < n; i++)
		x += (unsigned long)(i * i) ^ (x >> 7);
	sink = x;
	return x;
}
} // namespace kperf_test

static long long cpu_ns()
{
	timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long ms = 300;
	kperf_test::Burner b;
	char go;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--wait") && read(0, &go, 1) != 1)
			return 3;
	}
	ms += cpu_ns() / 1000000; /* what start-up used does not count */
	while (cpu_ns() < ms * 1000000LL)
		b.spin(100000);
	return 0;
}
