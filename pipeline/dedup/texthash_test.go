package dedup

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// readAll reads one input into a new batch and describes it.
func readAll(t *testing.T, p string) string {
	t.Helper()
	in, err := probe(p, p, "")
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch(3600_000)
	defer b.release()
	if _, err := readInput(context.Background(), in, t0.UnixMilli(), b); err != nil {
		t.Fatal(err)
	}
	return describe(b)
}

// TestDuckDBHexHashes: a VARCHAR info_hash (and info_hash_v2) of hex,
// either case, reads as the same hashes as BLOBs, through the fast path
// and the row reader.
func TestDuckDBHexHashes(t *testing.T) {
	text, blob := readAll(t, duckFile("hex.parquet")), readAll(t, duckFile("hex_blob.parquet"))
	if text != blob {
		t.Fatalf("hex:\n%s\nBLOB:\n%s", text, blob)
	}
	if !strings.Contains(text, "50 observations") || strings.Count(text, "\n") != 11 {
		t.Fatalf("want 10 hashes, one v2, 50 observations:\n%s", text)
	}
	in, err := probe(duckFile("hex.parquet"), "hex.parquet", "")
	if err != nil {
		t.Fatal(err)
	}
	compareReaders(t, in)
}

// textObs is observations as another writer may hold them: hashes as
// strings, optional, info_hash dictionary-encoded.
type textObs struct {
	InfoHash   string `parquet:"info_hash,optional,dict"`
	InfoHashV2 string `parquet:"info_hash_v2,optional"`
	ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
}

// TestTextHashBadRows: text that is not a hex hash is bad input naming the
// row, the column's type and the value, through the fast path and the row
// reader, in plain and dictionary pages, and in Arrow streams.
func TestTextHashBadRows(t *testing.T) {
	const v1 = "0123456789abcdef0123456789abcdef01234567"
	rows := func(i int, bad textObs) []textObs {
		out := make([]textObs, 5000)
		for k := range out {
			out[k] = textObs{InfoHash: v1, ObservedAt: t0.UnixMilli()}
			if k%3 == 0 {
				out[k].InfoHashV2 = v1 + v1[:24]
			}
		}
		out[i] = bad
		return out
	}
	dir := t.TempDir()
	at := t0.UnixMilli()
	tests := []struct{ name, path, want string }{
		{"DuckDB, 32 digits", duckFile("hex_bad.parquet"),
			`row 4: info_hash "9dd4e461268c8034f5c8564e155c67a6" (a STRING column) is not a hex infohash (40 or 64 digits)`},
		{"dictionary, not hex", writeRows(t, filepath.Join(dir, "a.parquet"), rows(4321, textObs{InfoHash: "magnet:?xt=urn:btih:x", ObservedAt: at})),
			`row 4322: info_hash "magnet:?xt=urn:btih:x" (a STRING column) is not a hex infohash`},
		{"v2 of 40 digits", writeRows(t, filepath.Join(dir, "b.parquet"), rows(4322, textObs{InfoHash: v1, InfoHashV2: v1, ObservedAt: at})),
			`row 4323: info_hash_v2 "` + v1 + `" (a STRING column) is not a hex v2 hash (64 digits)`},
		{"Arrow utf8", textArrow(t, dir, 142, "0x"+v1[2:]),
			`row 143: info_hash "0x` + v1[2:] + `" (a utf8 column) is not a hex infohash (40 or 64 digits)`},
	}
	defer func() { fastPath = true }()
	for _, tt := range tests {
		for _, fast := range []bool{true, false} {
			t.Run(tt.name, func(t *testing.T) {
				fastPath = fast
				in, err := probe(tt.path, "in", "")
				if err != nil {
					t.Fatal(err)
				}
				b := newBatch(3600_000)
				defer b.release()
				_, err = readInput(context.Background(), in, t0.UnixMilli(), b)
				if err == nil || !strings.Contains(err.Error(), "dedup: in: "+tt.want) || exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("fast %v: err = %v, want %q", fast, err, tt.want)
				}
			})
		}
	}
}

// textArrow writes an Arrow stream of 2 batches of 100 rows, hashes as
// utf8 (v1) and large_utf8 (info_hash_v2 of every third row), row bad
// (if any) holding info_hash badHash; it returns the file.
func textArrow(t *testing.T, dir string, bad int, badHash string) string {
	t.Helper()
	obs := genObs(21, 200, 60)
	sch := arrow.NewSchema([]arrow.Field{
		{Name: "info_hash", Type: arrow.BinaryTypes.String},
		{Name: "info_hash_v2", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "observed_at", Type: &arrow.TimestampType{Unit: arrow.Millisecond}},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer rb.Release()
	for i, o := range obs {
		h := hex.EncodeToString(o.InfoHash[:])
		if i%2 == 0 {
			h = strings.ToUpper(h)
		}
		if i == bad {
			h = badHash
		}
		rb.Field(0).(*array.StringBuilder).Append(h)
		if o.InfoHash[0]%3 == 0 {
			rb.Field(1).(*array.LargeStringBuilder).Append(hex.EncodeToString(o.InfoHash[:]) + strings.Repeat("ab", 12))
		} else {
			rb.Field(1).AppendNull()
		}
		rb.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(o.ObservedAt))
		if i%100 == 99 {
			rec := rb.NewRecord()
			w.Write(rec)
			rec.Release()
		}
	}
	w.Close()
	p := filepath.Join(dir, "text.arrow")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestArrowTextHashes: an Arrow stream whose hashes are utf8 hex reads as
// the same observations as infohash's own stream of them.
func TestArrowTextHashes(t *testing.T) {
	dir := t.TempDir()
	text := readAll(t, textArrow(t, dir, -1, ""))
	obs := genObs(21, 200, 60)
	for i := range obs {
		if h := obs[i].InfoHash; h[0]%3 == 0 {
			obs[i].InfoHashV2 = append(h[:], bytes.Repeat([]byte{0xab}, 12)...)
		}
		obs[i].Source = schema.SourceImport
	}
	var own bytes.Buffer
	w, err := rowio.Create[schema.Observation]("-", &own)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(obs)
	w.Close()
	p := filepath.Join(dir, "own.arrow")
	os.WriteFile(p, own.Bytes(), 0o644)
	if want := readAll(t, p); text != want {
		t.Fatalf("utf8:\n%.2000s\nown:\n%.2000s", text, want)
	}
}
