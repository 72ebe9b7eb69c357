/*
 * utrace_cxx.cpp - a C++ workload for the UTrace tests: after a byte on stdin it calls the
 * member function ns::Counter::step(int) 7 times (mangled _ZN2ns7Counter4stepEi) and the
 * file-local twice(int) 3 times (mangled _ZL5twicei), then exits.
 */
#include <unistd.h>

namespace ns
{
struct Counter {
	long total;
	long step(int x);
};

__attribute__((noinline)) long Counter::step(int x)
{
	total += x;
	return total;
}
} // namespace ns

__attribute__((noinline)) static long twice(int x)
{
	return 2L * x;
}

volatile long sink;

int main()
{
	ns::Counter c{ 0 };
	char b;
	int i;

	if (read(0, &b, 1) != 1)
		return 1;
	for (i = 0; i < 7; i++)
		sink += c.step(i);
	for (i = 0; i < 3; i++)
		sink += twice(i);
	return 0;
}
