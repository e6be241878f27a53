package fetch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// v2BlobJob is a job whose info_hash is any binary (DuckDB's BLOB, an
// Arrow binary column) with an info_hash_v2.
type v2BlobJob struct {
	InfoHash   []byte `parquet:"info_hash"`
	InfoHashV2 []byte `parquet:"info_hash_v2,optional"`
}

// TestRunJobV2NotTheRowsHash: a job whose info_hash_v2 is not a full v2
// hash of its info_hash (32 bytes starting with a 20-byte info_hash, or
// equal to a 32-byte one) names two hashes; it is bad input naming the
// input and the row (counted from 0) on every jobs input (fetch's
// Parquet, a BLOB info_hash as DuckDB writes it, an Arrow stream), and
// nothing is fetched. fetch used to drop such an info_hash_v2 (or, for a
// 32-byte info_hash, overwrite it) and fetch the job. A job whose
// info_hash_v2 is its own is fetched.
func TestRunJobV2NotTheRowsHash(t *testing.T) {
	h := schema.Hash{0x72, 1}
	own := append(bytes.Clone(h[:]), bytes.Repeat([]byte{9}, 12)...)
	other := bytes.Repeat([]byte{0x6b}, 32)
	inputs := map[string]func(t *testing.T, dir string, rows []v2BlobJob) (path string, stdin io.Reader){
		"parquet": func(t *testing.T, dir string, rows []v2BlobJob) (string, io.Reader) {
			jobs := make([]schema.Job, len(rows))
			for i, r := range rows {
				jobs[i] = schema.Job{InfoHash: schema.Hash(r.InfoHash), InfoHashV2: r.InfoHashV2}
			}
			p := filepath.Join(dir, "jobs.parquet")
			writeRows(t, p, jobs)
			return p, nil
		},
		"blob parquet": func(t *testing.T, dir string, rows []v2BlobJob) (string, io.Reader) {
			p := filepath.Join(dir, "jobs.parquet")
			writeRows(t, p, rows)
			return p, nil
		},
		"arrow": func(t *testing.T, _ string, rows []v2BlobJob) (string, io.Reader) {
			return "-", arrowJobs(t, rows)
		},
	}
	for _, tt := range []struct {
		name       string
		hash, v2   []byte
		want       string // the error after "row 2: ", "" when the job is fetched
		onlyBinary bool   // a 32-byte info_hash: not in fetch's own Parquet
	}{
		{"another hash", h[:], other, fmt.Sprintf("info_hash_v2 %x does not start with the row's info_hash %x", other, h), false},
		{"31 bytes", h[:], own[:31], "info_hash_v2 has 31 bytes, want 32", false},
		{"32-byte info_hash and another", own, other, fmt.Sprintf("info_hash_v2 differs from the row's 32-byte info_hash %x", own), true},
		{"its own", h[:], own, "", false},
		{"32-byte info_hash and itself", own, own, "", true},
	} {
		for name, input := range inputs {
			if tt.onlyBinary && name == "parquet" {
				continue
			}
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				dir := t.TempDir()
				rows := []v2BlobJob{{InfoHash: []byte{0x72, 0, 19: 0}}, {InfoHash: tt.hash, InfoHashV2: tt.v2}}
				out := filepath.Join(dir, "results.parquet")
				o := testOptions()
				o.Input, o.Stdin = input(t, dir, rows)
				o.Output = out
				st, err := Run(context.Background(), o)
				if tt.want == "" {
					if err != nil || st.Attempted != 2 {
						t.Fatalf("err %v, outcomes %v; want both jobs attempted", err, st.Outcomes)
					}
					return
				}
				if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), ": row 2: "+tt.want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %v (exit %d); want one line, exit 2, with %q", err, exitcode.Of(err), "row 2: "+tt.want)
				}
			})
		}
	}
}
