/*
 * inline_cxx.cpp - a C++ workload with known inlining, built -O2 -g (not with the other
 * workloads' -fno-inline: see the Makefile), for the inline frame tests.
 *
 * chain(): leaf() inlined into mid() inlined into top(), all inlined into chain() (a real
 * function). with_lambda(): ns::Acc<long>::add inlined into a lambda inlined into the
 * template apply<>(), inlined into with_lambda(). The INL_* comments mark the lines the tests
 * expect; they find them in this file.
 *
 *   inline_cxx            print "chain=0xADDR lambda=0xADDR", then "ready", and wait for
 *                         stdin to close
 *   inline_cxx --ms N [--wait]
 *                         burn CPU in the inlined leaf() for N ms (a profile shows it);
 *                         --wait: first wait for a byte on stdin
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

namespace ns
{
template <typename T> struct Acc {
	T v;
	__attribute__((always_inline)) inline void add(T x)
	{
		v = v * 31 + x; /* INL_ADD */
	}
};
} // namespace ns

volatile unsigned sink;

static __attribute__((always_inline)) inline unsigned leaf(unsigned x)
{
	return x * x + 7; /* INL_LEAF */
}

static __attribute__((always_inline)) inline unsigned mid(unsigned x)
{
	return leaf(x) ^ (x >> 3); /* INL_MID_CALL */
}

static __attribute__((always_inline)) inline unsigned top(unsigned x)
{
	return mid(x + 1) + sink; /* INL_TOP_CALL */
}

__attribute__((noinline)) unsigned chain(unsigned n)
{
	unsigned s = 0;

	for (unsigned i = 0; i < n; i++)
		s += top(i); /* INL_CHAIN_CALL */
	return s;
}

template <typename F> __attribute__((always_inline)) inline long apply(F f, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += f(i); /* INL_APPLY_CALL */
	return s;
}

__attribute__((noinline)) long with_lambda(int n)
{
	ns::Acc<long> acc{ 1 };

	auto f = [&](int x) __attribute__((always_inline)) {
		acc.add(x + sink); /* INL_LAMBDA_CALL */
		return acc.v & 0xff;
	};

	return apply(f, n); /* INL_WITH_CALL */
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	char c;

	if (argc >= 3 && !strcmp(argv[1], "--ms")) {
		double end;

		if (argc > 3 && !strcmp(argv[3], "--wait") && read(0, &c, 1) != 1)
			return 1;
		end = now_ms() + atof(argv[2]);
		while (now_ms() < end)
			sink = chain(1000000) + (unsigned)with_lambda(1000);
		return 0;
	}
	sink = chain(10) + (unsigned)with_lambda(10);
	std::printf("chain=%p lambda=%p\nready\n", (void *)&chain, (void *)&with_lambda);
	std::fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
