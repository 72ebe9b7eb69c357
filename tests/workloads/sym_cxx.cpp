/*
 * sym_cxx.cpp - a C++ workload for the symbol resolver tests: prints the address of the
 * member function ns::Klass::method(int) as "method=0xaddr", then "ready", and waits for its
 * stdin to close. Its mangled name is _ZN2ns5Klass6methodEi.
 */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace ns
{
struct Klass {
	int base;
	int method(int x);
};

int Klass::method(int x)
{
	return base + x * 2;
}
} // namespace ns

volatile int sink;

int main()
{
	int (ns::Klass::*pm)(int) = &ns::Klass::method;
	std::uintptr_t words[2];
	ns::Klass k{ 1 };
	char c;

	sink = (k.*pm)(20);
	/* Itanium C++ ABI: a pointer to a non-virtual member function holds its address */
	std::memcpy(words, &pm, sizeof(words));
	std::printf("method=%#lx\nready\n", (unsigned long)words[0]);
	std::fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
