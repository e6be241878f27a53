package merge

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestSpillHoldsMetadata: read with a spill, an ok result's row keeps no
// metadata, the spill gives it back as read without one, and closing the
// spill removes its folder from DIR/staging.
func TestSpillHoldsMetadata(t *testing.T) {
	info, h := torrentInfo("spilled")
	ok := success(schema.Job{InfoHash: h, HashType: schema.HashV1, Attempt: 1}, info, t0+hour)
	ok.Files = []schema.File{{Path: "a/b", PathRaw: []byte("a/b"), Length: 42}}
	in := input{name: "IN", path: writeResults(t, []schema.Result{ok, failure(schema.Job{InfoHash: hashAt(1, 1)}, schema.OutcomeNoPeers, t0+hour)})}
	want, _, err := readResults(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := makeDataset(t, nil)
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sp := newMetaSpill(d)
	got, _, err := readResults(in, sp)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].meta.spilled() || !reflect.DeepEqual(got[0].ResultMeta, schema.ResultMeta{}) || got[1].meta.spilled() {
		t.Fatalf("read %+v: want the ok row's metadata spilled, the failure's not", got)
	}
	if got[0].infoLen() != int64(len(info)) {
		t.Fatalf("info_bytes of %d bytes, want %d", got[0].infoLen(), len(info))
	}
	m, err := sp.get(got[0].meta)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, want[0].Meta()) {
		t.Fatalf("spill gave back\n%#v\nwant\n%#v", m, want[0].Meta())
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "staging")); len(ents) != 1 {
		t.Fatalf("staging holds %d entries, want the spill's folder", len(ents))
	}
	sp.close()
	if ents, _ := os.ReadDir(filepath.Join(dir, "staging")); len(ents) != 0 {
		t.Fatalf("closed spill left %v in staging", ents)
	}
}

// TestMergeRemovesSpill: however a merge ends, it leaves nothing in
// DIR/staging: failed on bad input after an ok result was spilled,
// applied, already applied.
func TestMergeRemovesSpill(t *testing.T) {
	info, h := torrentInfo("spilled")
	ok := writeResults(t, []schema.Result{success(schema.Job{InfoHash: h, HashType: schema.HashV1, Attempt: 1}, info, t0+hour)})
	bad := filepath.Join(t.TempDir(), "bad.parquet")
	if err := os.WriteFile(bad, []byte("PAR1 but no Parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := makeDataset(t, nil)
	tests := []struct {
		name     string
		inputs   []string
		wantExit int
		stored   int64
	}{
		{"bad input after an ok result", []string{ok, bad}, exitcode.Usage, 0},
		{"applied", []string{ok}, exitcode.OK, 1},
		{"already applied", []string{ok}, exitcode.OK, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := tryMerge(dir, t0+2*hour, tt.inputs...)
			if exitcode.Of(err) != tt.wantExit || st.Stored != tt.stored {
				t.Fatalf("stored %d, err %v (exit %d), want %d stored, exit %d", st.Stored, err, exitcode.Of(err), tt.stored, tt.wantExit)
			}
			if ents, _ := os.ReadDir(filepath.Join(dir, "staging")); len(ents) != 0 {
				t.Fatalf("staging holds %v", ents)
			}
		})
	}
}
