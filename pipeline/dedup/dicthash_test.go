package dedup

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// Observations with a FIXED_LEN_BYTE_ARRAY(20) info_hash, dictionary
// encoded (dictHashObs) or PLAIN (plainHashObs), as capture writes them.
type (
	dictHashObs struct {
		InfoHash   schema.Hash `parquet:"info_hash,dict"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		Source     string      `parquet:"source"`
	}
	plainHashObs struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		Source     string      `parquet:"source"`
	}
)

// TestDictFixedHash: a FIXED_LEN_BYTE_ARRAY(20) info_hash column whose
// pages are dictionary-encoded (several pages and row groups, hashes
// repeated across them) commits the state the same observations commit
// written PLAIN, by the column reader (hashPage's dictionary branch) and
// the row reader: the same hashes, seen_count, first and last seen, each
// as the rows say. No test read such a column: the column reader refused
// every such file as "corrupt Parquet: the decoder failed" (hashPage asked
// the page, whose values are dictionary indexes, for its hashes first),
// and a break in its dictionary branch went unnoticed.
func TestDictFixedHash(t *testing.T) {
	const n, distinct = 30_000, 700
	r := rand.New(rand.NewPCG(7, 11))
	hashes := make([]schema.Hash, distinct)
	for i := range hashes {
		for k := range hashes[i] {
			hashes[i][k] = byte(r.Uint32())
		}
	}
	type seen struct{ count, first, last int64 }
	want := map[schema.Hash]seen{}
	dict, plain := make([]dictHashObs, n), make([]plainHashObs, n)
	for i := range n {
		h := hashes[r.IntN(distinct)]
		at := t0.UnixMilli() + r.Int64N(3_600_000)
		dict[i] = dictHashObs{InfoHash: h, ObservedAt: at, Source: schema.SourceGetPeers}
		plain[i] = plainHashObs(dict[i])
		s, ok := want[h]
		if !ok {
			s = seen{0, at, at}
		}
		s.count, s.first, s.last = s.count+1, min(s.first, at), max(s.last, at)
		want[h] = s
	}
	dir := t.TempDir()
	opts := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(n / 3), parquet.PageBufferSize(4 << 10)}
	files := map[string]string{
		"dictionary": writeWith(t, filepath.Join(dir, "dict.parquet"), dict, opts...),
		"plain":      writeWith(t, filepath.Join(dir, "plain.parquet"), plain, opts...),
	}
	if pages, dicts := hashPages(t, files["dictionary"]); pages < 6 || dicts != pages {
		t.Fatalf("the dictionary file's info_hash has %d pages, %d of them dictionary-encoded; want several, all", pages, dicts)
	}
	if _, dicts := hashPages(t, files["plain"]); dicts != 0 {
		t.Fatalf("the plain file's info_hash has %d dictionary-encoded pages", dicts)
	}
	eachParquetReader(t, "state", func(t *testing.T) {
		got := map[string]map[schema.Hash]schema.State{}
		for name, in := range files {
			data := filepath.Join(t.TempDir(), "ds")
			if _, err := run(t, data, nil, in); err != nil {
				t.Fatal(err)
			}
			got[name] = readState(t, data)
			if len(got[name]) != len(want) {
				t.Errorf("%s: %d hashes, want %d", name, len(got[name]), len(want))
			}
			for h, w := range want {
				s, ok := got[name][h]
				if !ok || s.SeenCount != w.count || s.FirstSeen != w.first || s.LastSeen != w.last {
					t.Fatalf("%s: hash %x: seen_count %d, first %d, last %d (present %v); want %d, %d, %d",
						name, h, s.SeenCount, s.FirstSeen, s.LastSeen, ok, w.count, w.first, w.last)
				}
			}
		}
		for h, p := range got["plain"] {
			if d := got["dictionary"][h]; fmt.Sprint(d) != fmt.Sprint(p) {
				t.Fatalf("hash %x: from the dictionary file\n%+v\nfrom the plain file\n%+v", h, d, p)
			}
		}
	})
}

// writeWith writes rows as a Parquet file at path with the writer's
// options opts.
func writeWith[T any](t *testing.T, path string, rows []T, opts ...parquet.WriterOption) string {
	t.Helper()
	w, err := rowio.Create[T](path, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// hashPages counts the data pages of the info_hash column of the Parquet
// file at path, and those of them that are dictionary-encoded.
func hashPages(t *testing.T, path string) (pages, dicts int) {
	t.Helper()
	pf := parquetFileAt(t, path)
	col, _ := pf.Schema().Lookup("info_hash")
	for _, rg := range pf.RowGroups() {
		ps := rg.ColumnChunks()[col.ColumnIndex].Pages()
		for {
			p, err := ps.ReadPage()
			if err != nil {
				break
			}
			pages++
			if p.Dictionary() != nil {
				dicts++
			}
			parquet.Release(p)
		}
		ps.Close()
	}
	return pages, dicts
}
