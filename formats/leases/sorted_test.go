package leases

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

// TestSorted: ReadSorted keeps of a hash's rows the one Read keeps, in
// hash order, whatever the order of the file; Write leaves out the
// leases dropped and those past the grace, and Expired counts the latter.
func TestSorted(t *testing.T) {
	const now = 10 * Grace
	a, b, c := lease(1, "a", now), lease(2, "b", now+5), lease(3, "c", now-Grace-1) // c is past the grace
	b1, b2 := b, b
	b1.LeaseID, b1.PlannedAt = "b-older", b.PlannedAt-1
	b2.LeaseID = "b-same-time-later" // read last among the latest: kept
	ds, err := commitLeases(t, func(tx *dataset.Tx) error {
		fi, err := dataset.WriteStaged(tx, dataset.TableLeases, "", []schema.Lease{c, b, a, b1, b2})
		tx.SetPartition(dataset.TableLeases, "", []dataset.FileInfo{fi})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ds.Current()
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSorted(ds, m)
	if err != nil {
		t.Fatal(err)
	}
	set, err := Read(ds, m)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slices.Collect(s.All()), []schema.Lease{a, b2, c}; !slices.Equal(got, want) || s.Len() != len(want) || set[b.InfoHash] != b2 {
		t.Fatalf("ReadSorted = %v (%d), want %v (Read keeps %v)", got, s.Len(), want, set[b.InfoHash])
	}
	if l, ok := s.Get(b.InfoHash); !ok || l != b2 || !s.Live(b.InfoHash, now) || s.Live(a.InfoHash, now) {
		t.Fatalf("Get(b) = %v, %v; Live(b) %v, Live(a) %v", l, ok, s.Live(b.InfoHash, now), s.Live(a.InfoHash, now))
	}
	if _, ok := s.Get(schema.Hash{9}); ok {
		t.Fatal("Get found a hash without a lease")
	}
	if n := s.Expired(now); n != 1 {
		t.Fatalf("Expired = %d, want 1", n)
	}
	// The ids of the leases held (an expired one too), not the id a
	// later row superseded, nor a reason, nor an id no lease has.
	ids := []string{"a", "b-same-time-later", "c", "b-older", schema.ReasonNew, "x", ""}
	if got, want := s.HoldsIDs(ids), []bool{true, true, true, false, false, false, false}; !slices.Equal(got, want) {
		t.Fatalf("HoldsIDs(%q) = %v, want %v", ids, got, want)
	}
	for _, tt := range []struct {
		name string
		drop []schema.Hash
		want []schema.Lease
	}{
		{"nothing dropped", nil, []schema.Lease{a, b2}},
		{"one dropped", []schema.Hash{a.InfoHash}, []schema.Lease{b2}},
		{"all dropped", []schema.Hash{a.InfoHash, b.InfoHash, {9}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := commitLeases(t, func(tx *dataset.Tx) error { return s.Write(tx, tt.drop, now) })
			if err != nil {
				t.Fatal(err)
			}
			if got := fileRows(t, out); !slices.Equal(got, tt.want) {
				t.Fatalf("rows\n got  %v\n want %v", got, tt.want)
			}
		})
	}
	if _, err := commitLeases(t, func(tx *dataset.Tx) error {
		return s.Write(tx, []schema.Hash{b.InfoHash, a.InfoHash}, now)
	}); err == nil {
		t.Fatal("Write took hashes to drop out of order")
	}
}

// TestSortedManyIDs: a table whose leases have ids of their own, more
// than ReadSorted shares through its map (maxInterned), over two files
// and several batches, comes back whole, in hash order, and is written
// back as it was read.
func TestSortedManyIDs(t *testing.T) {
	const now = 10 * Grace
	var files [2][]schema.Lease
	var want []schema.Lease
	for i := range 2*maxInterned + 100 { // over 4096 rows a file: two batches each
		l := lease(0, fmt.Sprint("lease-", i), now+int64(i))
		binary.BigEndian.PutUint32(l.InfoHash[:], uint32(i))
		if i%3 == 0 {
			l.Reason = schema.ReasonRetry
		}
		files[i%2] = append(files[i%2], l)
		want = append(want, l)
	}
	ds, m := commitLeaseFiles(t, files[:]...)
	s, err := ReadSorted(ds, m)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Collect(s.All()); !slices.Equal(got, want) {
		t.Fatalf("ReadSorted: %d leases, want %d, or not the same", len(got), len(want))
	}
	out, err := commitLeases(t, func(tx *dataset.Tx) error { return s.Write(tx, nil, now) })
	if err != nil {
		t.Fatal(err)
	}
	if got := fileRows(t, out); !slices.Equal(got, want) {
		t.Fatalf("written: %d leases, want %d, or not the same", len(got), len(want))
	}
}

// TestSortedAsRead: a table of several files, more than a batch each,
// out of hash order, with a hash's rows spread over files and batches
// (planned at the same time or not) and lease ids past maxInterned, is
// held by ReadSorted as Read holds it: the same lease a hash, in hash
// order; and Get finds no lease for a hash without one, also one that
// differs from a leased hash in its last byte or ties on its first 8.
func TestSortedAsRead(t *testing.T) {
	for _, tt := range []struct {
		name          string
		files, hashes int
		ids           int
	}{
		{"one file, few hashes", 1, 50, 3},
		{"three files, many ids", 3, 6000, 2 * maxInterned},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tt.hashes), 3))
			files := make([][]schema.Lease, tt.files)
			for range 4 * 4096 { // more than a batch (4096 rows) a file
				k := rng.IntN(tt.hashes)
				var h schema.Hash
				h[0], h[1], h[19] = byte(k>>8), byte(k), byte(k%3)
				if k%7 == 0 {
					h[8] = 1 // ties with others on the first 8 bytes
				}
				l := schema.Lease{InfoHash: h, LeaseID: fmt.Sprint("id", rng.IntN(tt.ids)), LeaseUntil: rng.Int64N(100),
					Attempt: int32(rng.IntN(5)), Reason: fmt.Sprint("r", rng.IntN(3)), PlannedAt: rng.Int64N(4)}
				f := rng.IntN(tt.files)
				files[f] = append(files[f], l)
			}
			ds, m := commitLeaseFiles(t, files...)
			s, err := ReadSorted(ds, m)
			if err != nil {
				t.Fatal(err)
			}
			set, err := Read(ds, m)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Collect(s.All())
			if len(got) != len(set) || s.Len() != len(set) {
				t.Fatalf("ReadSorted holds %d leases (Len %d), Read %d", len(got), s.Len(), len(set))
			}
			for i, l := range got {
				if set[l.InfoHash] != l {
					t.Fatalf("lease %d: ReadSorted holds %v, Read %v", i, l, set[l.InfoHash])
				}
				if i > 0 && bytes.Compare(got[i-1].InfoHash[:], l.InfoHash[:]) >= 0 {
					t.Fatalf("lease %d (%x) not after %x", i, l.InfoHash, got[i-1].InfoHash)
				}
				if g, ok := s.Get(l.InfoHash); !ok || g != l {
					t.Fatalf("Get(%x) = %v, %v; want %v", l.InfoHash, g, ok, l)
				}
				for _, near := range []schema.Hash{lastByteFlipped(l.InfoHash), {0: l.InfoHash[0], 1: l.InfoHash[1], 8: 2}} {
					if _, leased := set[near]; !leased {
						if g, ok := s.Get(near); ok {
							t.Fatalf("Get(%x) found %v: no lease", near, g)
						}
					}
				}
			}
		})
	}
}

func lastByteFlipped(h schema.Hash) schema.Hash {
	h[19] ^= 0x80
	return h
}

// commitLeaseFiles commits a lease table of one file per element of
// files, in that order, to a new dataset, and returns it (open) with the
// snapshot's manifest.
func commitLeaseFiles(t *testing.T, files ...[]schema.Lease) (*dataset.Dataset, *dataset.Manifest) {
	t.Helper()
	ds, err := commitLeases(t, func(tx *dataset.Tx) error {
		var fis []dataset.FileInfo
		for _, rows := range files {
			fi, err := dataset.WriteStaged(tx, dataset.TableLeases, "", rows)
			if err != nil {
				return err
			}
			fis = append(fis, fi)
		}
		tx.SetPartition(dataset.TableLeases, "", fis)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ds.Current()
	if err != nil {
		t.Fatal(err)
	}
	return ds, m
}
