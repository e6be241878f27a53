package fetch

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// hexJob is a job whose hash columns are text (DuckDB's VARCHAR, Arrow's
// utf8); fixedHexV2Job and blobHexV2Job have only info_hash_v2 of text.
type (
	hexJob struct {
		InfoHash   string `parquet:"info_hash"`
		InfoHashV2 string `parquet:"info_hash_v2,optional"`
	}
	fixedHexV2Job struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		InfoHashV2 string      `parquet:"info_hash_v2,optional"`
	}
	blobHexV2Job struct {
		InfoHash   []byte `parquet:"info_hash"`
		InfoHashV2 string `parquet:"info_hash_v2,optional"`
	}
)

// readJobsFrom reads every job of path (stdin when "-") as openJobs does.
func readJobsFrom(t *testing.T, path string, stdin io.Reader) ([]jobRow, error) {
	t.Helper()
	r, err := openJobs(path, stdin, "")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []jobRow
	buf := make([]jobRow, 2)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// TestOpenJobsTextHashColumns: a text info_hash_v2 (with info_hash of
// any kind) in Parquet, and text hash columns in an Arrow stream, hold
// hex as a Parquet VARCHAR info_hash does: decoded, and any other text
// bad input naming the row, the column and its type, quoted as dedup
// quotes it. fetch used to read such an info_hash_v2's hex as its bytes
// (64 of them: bad input) and to refuse an Arrow utf8 info_hash.
func TestOpenJobsTextHashColumns(t *testing.T) {
	v1 := strings.Repeat("ab", 20)
	full := bytes.Repeat([]byte{0xc0, 0x1d}, 16)
	v2 := strings.ToUpper(hex.EncodeToString(full))
	unhex := func(s string) []byte { b, _ := hex.DecodeString(s); return b }
	type input struct {
		typ      string // the text columns' type, as errors name it
		textHash bool   // info_hash is text too
		make     func(t *testing.T, dir string, rows []hexJob) (string, io.Reader)
	}
	inputs := map[string]input{
		"parquet": {"STRING", false, func(t *testing.T, dir string, rows []hexJob) (string, io.Reader) {
			out := make([]fixedHexV2Job, len(rows))
			for i, r := range rows {
				out[i] = fixedHexV2Job{schema.Hash(unhex(r.InfoHash)), r.InfoHashV2}
			}
			p := filepath.Join(dir, "jobs.parquet")
			writeRows(t, p, out)
			return p, nil
		}},
		"blob parquet": {"STRING", false, func(t *testing.T, dir string, rows []hexJob) (string, io.Reader) {
			out := make([]blobHexV2Job, len(rows))
			for i, r := range rows {
				out[i] = blobHexV2Job{unhex(r.InfoHash), r.InfoHashV2}
			}
			p := filepath.Join(dir, "jobs.parquet")
			writeRows(t, p, out)
			return p, nil
		}},
		"text parquet": {"STRING", true, func(t *testing.T, dir string, rows []hexJob) (string, io.Reader) {
			p := filepath.Join(dir, "jobs.parquet")
			writeRows(t, p, rows)
			return p, nil
		}},
		"arrow": {"utf8", true, func(t *testing.T, _ string, rows []hexJob) (string, io.Reader) {
			return "-", arrowJobs(t, rows)
		}},
		"arrow binary info_hash": {"utf8", false, func(t *testing.T, _ string, rows []hexJob) (string, io.Reader) {
			out := make([]blobHexV2Job, len(rows))
			for i, r := range rows {
				out[i] = blobHexV2Job{unhex(r.InfoHash), r.InfoHashV2}
			}
			return "-", arrowJobs(t, out)
		}},
	}
	tests := []struct {
		name     string
		row      hexJob // row 2, after a plain v1 job
		want     string // the error after "row 2: " (%s: the column type), "" for none
		textHash bool   // only where info_hash is text
	}{
		{"v2 of text", hexJob{v2[:40], v2}, "", false},
		{"v2 as info_hash", hexJob{v2, ""}, "", true},
		{"v2 not hex", hexJob{v1, strings.Repeat("zz", 32)}, `info_hash_v2 "` + strings.Repeat("z", 55) + `"... (a %s column) is not a hex v2 hash (64 digits)`, false},
		{"v2 of 40 digits", hexJob{v1, v1}, `info_hash_v2 "` + v1 + `" (a %s column) is not a hex v2 hash (64 digits)`, false},
		{"info_hash not hex", hexJob{"abc", ""}, `info_hash "abc" (a %s column) is not a hex infohash (40 or 64 digits)`, true},
	}
	for _, tt := range tests {
		for name, in := range inputs {
			if tt.textHash && !in.textHash {
				continue
			}
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				path, stdin := in.make(t, t.TempDir(), []hexJob{{v1, ""}, tt.row})
				rows, err := readJobsFrom(t, path, stdin)
				if tt.want != "" {
					want := "row 2: " + fmt.Sprintf(tt.want, in.typ)
					if err == nil || !strings.Contains(err.Error(), want) || len(rows) != 1 {
						t.Fatalf("%d rows, error %v; want 1 row and an error with %q", len(rows), err, want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != 2 || rows[0].InfoHash != schema.Hash(unhex(v1)) || rows[0].InfoHashV2 != nil {
					t.Fatalf("rows %+v; want 2, the first %s", rows, v1)
				}
				if r := rows[1]; r.InfoHash != schema.Hash(full) || !bytes.Equal(r.InfoHashV2, full) {
					t.Fatalf("row 2 %x v2 %x; want %x", r.InfoHash, r.InfoHashV2, full)
				}
			})
		}
	}
}

// TestJobsInfoHashRule: fetch reads a jobs info_hash by the rule dedup
// and merge read one by (textenc.HashValue): text (VARCHAR, utf8) is hex,
// 40 digits or 64, bytes (BLOB, binary) the hash's 20 or 32 bytes, never
// the other way: 20 characters of text and 40 bytes of a BLOB are bad
// input naming the row, in Parquet and on stdin (Arrow).
func TestJobsInfoHashRule(t *testing.T) {
	h := bytes.Repeat([]byte{0x5e}, 20)
	text := func(v string) func(t *testing.T, dir string) (string, io.Reader) {
		rows := []hexJob{{hex.EncodeToString(h), ""}, {v, ""}}
		return func(t *testing.T, dir string) (string, io.Reader) {
			if dir == "" {
				return "-", arrowJobs(t, rows)
			}
			p := filepath.Join(dir, "jobs.parquet")
			writeRows(t, p, rows)
			return p, nil
		}
	}
	blob := func(v []byte) func(t *testing.T, dir string) (string, io.Reader) {
		rows := []blobHexV2Job{{h, ""}, {v, ""}}
		return func(t *testing.T, dir string) (string, io.Reader) {
			if dir == "" {
				return "-", arrowJobs(t, rows)
			}
			p := filepath.Join(dir, "jobs.parquet")
			writeRows(t, p, rows)
			return p, nil
		}
	}
	for _, tt := range []struct {
		name  string
		input func(t *testing.T, dir string) (string, io.Reader) // dir "": an Arrow stream on stdin
		want  string                                             // the error after "row 2: " (%s: the column type), "" for none
	}{
		{"text, 40 hex digits", text(hex.EncodeToString(h)), ""},
		{"text, 20 characters", text("abcdefghij0123456789"),
			`info_hash "abcdefghij0123456789" (a %s column) is not a hex infohash (40 or 64 digits)`},
		{"bytes, 20", blob(h), ""},
		{"bytes, 40 hex digits", blob([]byte(hex.EncodeToString(h))), "info_hash has 40 bytes, want 20 (or 32 for v2)"},
	} {
		for _, format := range []string{"parquet", "arrow"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				dir := t.TempDir()
				if format == "arrow" {
					dir = ""
				}
				path, stdin := tt.input(t, dir)
				rows, err := readJobsFrom(t, path, stdin)
				if tt.want == "" {
					if err != nil || len(rows) != 2 || rows[1].InfoHash != schema.Hash(h) {
						t.Fatalf("rows %+v, err %v; want 2 of hash %x", rows, err, h)
					}
					return
				}
				want := "row 2: " + strings.Replace(tt.want, "%s", map[string]string{"parquet": "STRING", "arrow": "utf8"}[format], 1)
				if err == nil || !strings.HasSuffix(err.Error(), want) || len(rows) != 1 {
					t.Fatalf("%d rows, error %v; want 1 row and an error ending %q", len(rows), err, want)
				}
			})
		}
	}
}
