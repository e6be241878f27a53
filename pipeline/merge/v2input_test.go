package merge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestResultV2NotTheRowsHash: a result whose info_hash_v2 is not a full
// v2 hash of its info_hash (32 bytes starting with it) names two hashes
// at once; it is bad input on every input path merge reads results from
// (fetch's Parquet, DuckDB's BLOB Parquet, an Arrow stream): exit 2, one
// line naming the file, the row and the hash, nothing applied. A failure
// row with such an info_hash_v2 used to be applied, the v2 hash dropped.
// A row whose info_hash_v2 does start with its info_hash is applied.
func TestResultV2NotTheRowsHash(t *testing.T) {
	h := hashAt(0x51, 1)
	mine := append(bytes.Clone(h[:]), bytes.Repeat([]byte{7}, 12)...)
	other := bytes.Repeat([]byte{0x6b}, 32)
	byte19 := bytes.Clone(mine)
	byte19[19] ^= 1
	writers := map[string]func(*testing.T, []schema.Result) string{
		"parquet": writeResults, "blob parquet": writeBlobResults, "arrow": writeArrowResults,
	}
	for _, tt := range []struct {
		name string
		v2   []byte
		want string // "" when the row is applied
	}{
		{"another hash", other, fmt.Sprintf("info_hash_v2 %x does not start with the row's info_hash", other)},
		{"differs in byte 19", byte19, fmt.Sprintf("info_hash_v2 %x does not start with the row's info_hash", byte19)},
		{"31 bytes", mine[:31], "info_hash_v2 has 31 bytes, want 32"},
		{"the row's own", mine, ""},
	} {
		for name, write := range writers {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				dir := makeDataset(t, []schema.State{newHash(h, t0)})
				path := write(t, []schema.Result{{InfoHash: h, InfoHashV2: tt.v2, HashType: schema.HashV2,
					AttemptedAt: t0, Outcome: schema.OutcomeNoPeers}})
				_, err := tryMerge(dir, t0+hour, path)
				attempts := stateOf(t, dir)[h].Attempts
				if tt.want == "" {
					if err != nil || attempts != 1 {
						t.Fatalf("err %v, %d attempts; want the result applied", err, attempts)
					}
					return
				}
				want := fmt.Sprintf("%s: row 1: %s: %s", path, schema.Hex(h), tt.want)
				if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v (exit %d); want one line, exit 2, with %q", err, exitcode.Of(err), want)
				}
				if attempts != 0 {
					t.Fatalf("a refused input changed the state: %d attempts", attempts)
				}
			})
		}
	}
}

// writeBlobResults writes results to a new Parquet file whose info_hash
// is a BYTE_ARRAY column, as DuckDB writes it.
func writeBlobResults(t *testing.T, rs []schema.Result) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.parquet")
	w, err := rowio.Create[blobResult](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		b := blobResult{InfoHash: r.InfoHash[:], InfoHashV2: r.InfoHashV2, HashType: r.HashType, Attempt: r.Attempt,
			LeaseID: r.LeaseID, AttemptedAt: r.AttemptedAt, Outcome: r.Outcome, PeerFailures: r.PeerFailures, ResultMeta: r.ResultMeta}
		if err := w.Write([]blobResult{b}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeArrowResults writes results as an Arrow IPC stream to a new file.
func writeArrowResults(t *testing.T, rs []schema.Result) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := rowio.Create[schema.Result]("-", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "results.arrow")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
