//go:build !amd64

package dedup

// prefetch is a no-op where infohash has no prefetching instruction.
func prefetch(addrs *uintptr, n int) {}
