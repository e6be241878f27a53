package dedup

// prefetch hints the processor to load the cache lines holding addrs[:n];
// it never faults and never waits (see prefetch_amd64.s).
//
//go:noescape
func prefetch(addrs *uintptr, n int)
