// utrace_go - a Go workload for UTrace's fetchG: prints the g (goroutine) pointer of its main
// goroutine as "g=0x...", waits for a byte on stdin, then calls work() 50 times on that
// goroutine and exits. Under Go's register ABI, g is in r14 (x86_64) or x28 (arm64) in
// every Go function, which is what a probe reads.
package main

import (
	"fmt"
	"os"
	"runtime"
)

// getg returns the current g, from thread-local storage (g_amd64.s, g_arm64.s)
func getg() uintptr

var sink int

//go:noinline
func work(x int) int {
	sink += x
	return sink
}

func main() {
	runtime.LockOSThread()
	fmt.Printf("g=%#x\n", getg())
	os.Stdout.Sync()
	b := make([]byte, 1)
	if n, _ := os.Stdin.Read(b); n != 1 {
		os.Exit(1)
	}
	for i := 0; i < 50; i++ {
		work(i)
	}
}
