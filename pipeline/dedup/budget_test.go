package dedup

import "testing"

// TestBatchHashesCountsPeers: the default batch bound spends half the
// memory at bytesPerHash a hash, and at peerBytesPerHash more with
// announced peers kept (up to schema.MaxStatePeers records a hash), so
// that a batch of them fits too: fewer hashes a batch with peers, the
// same as ever without.
func TestBatchHashesCountsPeers(t *testing.T) {
	const gib = int64(1) << 30
	for _, tc := range []struct {
		name            string
		mem             int64
		without, withPs int64
	}{
		{"unknown memory: no bound", 0, 0, 0},
		{"small machine: the floor", gib / 16, 1 << 20, 1 << 20},
		{"8 GiB", 8 * gib, 8 * gib / 2 / 80, 8 * gib / 2 / 368},
		{"64 GiB cgroup", 64 * gib, 64 * gib / 2 / 80, 64 * gib / 2 / 368},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := batchHashesFor(tc.mem, false); got != tc.without {
				t.Errorf("without peers: %d, want %d", got, tc.without)
			}
			if got := batchHashesFor(tc.mem, true); got != tc.withPs {
				t.Errorf("with peers: %d, want %d", got, tc.withPs)
			}
		})
	}
	// A batch at the bound fits half the memory, peers and all.
	mem := 16 * gib
	if n := batchHashesFor(mem, true); n*(bytesPerHash+peerBytesPerHash) > mem/2 || n >= batchHashesFor(mem, false) {
		t.Errorf("with peers, %d hashes take %d B of %d", n, n*(bytesPerHash+peerBytesPerHash), mem/2)
	}
}
