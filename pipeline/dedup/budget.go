package dedup

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// bytesPerHash is about what a batch costs per distinct hash at its peak:
// 100M observations of 20M hashes peaked at 1.32 GB (aggregate, slot,
// sorted entry, the apply phase's buffers).
const bytesPerHash = 72

// DefaultBatchHashes is the default Options.BatchHashes: as many distinct
// hashes as half of the memory this process may use holds (the machine's,
// or its cgroup's limit if lower), so that a large backfill commits in
// several batches instead of running out of memory, and a run that is
// killed for memory is not retried with the same batch forever.
func DefaultBatchHashes() int64 {
	mem := memoryLimit()
	if mem <= 0 {
		return 0
	}
	return max(mem/2/bytesPerHash, 1<<20)
}

// memoryLimit is the memory available to this process in bytes (0 if
// unknown): physical memory, capped by a cgroup v2 memory.max.
func memoryLimit() int64 {
	var si unix.Sysinfo_t
	var mem int64
	if unix.Sysinfo(&si) == nil {
		mem = int64(si.Totalram) * int64(si.Unit)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (mem == 0 || v < mem) {
			mem = v
		}
	}
	return mem
}
