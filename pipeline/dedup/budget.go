package dedup

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// bytesPerHash is about what a batch costs per distinct hash at its peak:
// 100M observations of 20M hashes peaked at 1.32 GB (aggregate, slot,
// sorted entry, the apply phase's buffers) with 48-byte aggregates; 80
// leaves room for the newest announces a batch applied to a state with
// rows keeps beside them (table.anns: a map entry per hash announced).
const bytesPerHash = 80

// peerBytesPerHash is what keeping announced peers (AnnouncedPeers) adds
// per distinct hash at most: up to schema.MaxStatePeers 16-byte records
// (peerRec) kept per hash, as many again appended before a partition's
// records are compacted, the records' index, and the endpoints rendered
// while the partition is written. 1M hashes announced by 12 peers each
// peaked 288 B a hash above the same input read without peers (500k: 330
// B, fixed costs included).
const peerBytesPerHash = 288

// DefaultBatchHashes is the default Options.BatchHashes: as many distinct
// hashes as half of the memory this process may use holds (the machine's,
// or its cgroup's limit if lower), so that a large backfill commits in
// several batches instead of running out of memory, and a run that is
// killed for memory is not retried with the same batch forever. peers
// says whether the run keeps announced peers (AnnouncedPeers), which cost
// more a hash.
func DefaultBatchHashes(peers bool) int64 {
	return batchHashesFor(memoryLimit(), peers)
}

// batchHashesFor is DefaultBatchHashes for mem bytes of memory (0 if
// unknown: no bound).
func batchHashesFor(mem int64, peers bool) int64 {
	if mem <= 0 {
		return 0
	}
	per := int64(bytesPerHash)
	if peers {
		per += peerBytesPerHash
	}
	return max(mem/2/per, 1<<20)
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
