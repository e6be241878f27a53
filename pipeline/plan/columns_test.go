package plan

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/statecol"
	"github.com/infohash/infohash/pipeline/schedule"
)

// v2Of returns a full v2 hash whose first 20 bytes are h.
func v2Of(h schema.Hash) []byte {
	return append(h[:], bytes.Repeat([]byte{0xee}, 12)...)
}

// TestPlanCarriesV2: a job gets the state's full v2 hash when the state
// knows it, in a hot file beside v1 rows and in a cold file, and none
// for a v1 hash or a v2 hash known only truncated.
func TestPlanCarriesV2(t *testing.T) {
	p := schedule.Default()
	p.Plan.ColdPartitions = 1 // the first sweep reads partition 00's cold files
	p.Plan.ColdShare = 0.5
	now := ms(t0) + 30*day
	var (
		v1      = newHash(hashAt(0x01, 1), ms(t0))
		v2      = newHash(hashAt(0x01, 2), ms(t0))
		v2Short = newHash(hashAt(0x01, 3), ms(t0)) // a v2 hash whose full hash is not known
		v1Only  = newHash(hashAt(0x02, 1), ms(t0)) // a partition without any v2 hash
		v2Cold  = failedHash(t, hashAt(0x00, 1), ms(t0), ms(t0))
	)
	v2.HashType, v2.InfoHashV2 = schema.HashV2, v2Of(v2.InfoHash)
	v2Short.HashType = schema.HashV2
	v2Cold.HashType, v2Cold.InfoHashV2, v2Cold.Tier = schema.HashV2, v2Of(v2Cold.InfoHash), schema.TierCold
	dir := makeDataset(t, []schema.State{v1, v2, v2Short, v1Only, v2Cold}, nil)
	if err := schedule.Save(dir, p); err != nil {
		t.Fatal(err)
	}
	jobs, _ := runPlan(t, dir, now, 100, nil)
	got := jobSet(jobs)
	for _, st := range []schema.State{v1, v2, v2Short, v1Only, v2Cold} {
		j, ok := got[st.InfoHash]
		if !ok {
			t.Errorf("%x not planned", st.InfoHash)
			continue
		}
		if !bytes.Equal(j.InfoHashV2, st.InfoHashV2) || (st.InfoHashV2 == nil) != (j.InfoHashV2 == nil) {
			t.Errorf("%x: job's info_hash_v2 = %x, want %x", st.InfoHash, j.InfoHashV2, st.InfoHashV2)
		}
		if j.HashType != st.HashType {
			t.Errorf("%x: hash_type %d, want %d", st.InfoHash, j.HashType, st.HashType)
		}
	}
}

// TestPlanRejectsDamagedV2: a state's info_hash_v2 that is not a full v2
// hash of its info_hash fails planning, naming the file and the row.
func TestPlanRejectsDamagedV2(t *testing.T) {
	tests := []struct {
		name, want string
		v2         func(h schema.Hash) []byte
	}{
		{"short", "row 2: 3 bytes, want 32", func(schema.Hash) []byte { return []byte{1, 2, 3} }},
		{"another hash", "row 2: ", func(h schema.Hash) []byte { b := v2Of(h); b[0]++; return b }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := newHash(hashAt(0x01, 2), ms(t0))
			bad.HashType, bad.InfoHashV2 = schema.HashV2, tt.v2(bad.InfoHash)
			dir := makeDataset(t, []schema.State{newHash(hashAt(0x01, 1), ms(t0)), bad}, nil)
			o := DefaultOptions()
			o.Data, o.Now, o.Output = dir, time.UnixMilli(ms(t0)+day).UTC(), t.TempDir()+"/jobs.parquet"
			_, err := Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), "info_hash_v2: "+tt.want) || !strings.Contains(err.Error(), ".parquet") {
				t.Fatalf("err = %v, want one naming the file and %q", err, "info_hash_v2: "+tt.want)
			}
		})
	}
}

// TestPlanSkipsNullV2: a row group whose statistics say info_hash_v2 is
// all null is planned without decoding that column: garbage in its
// pages, which fails a read of it, does not fail planning.
func TestPlanSkipsNullV2(t *testing.T) {
	a, b := newHash(hashAt(0x01, 1), ms(t0)), newHash(hashAt(0x01, 2), ms(t0))
	dir := makeDataset(t, []schema.State{a, b}, nil)
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Current()
	if err != nil {
		t.Fatal(err)
	}
	tab := m.Table(dataset.TableState)
	path := d.FilePath(tab, "01", tab.Partitions["01"][0])
	spoilColumn(t, path, "info_hash_v2")

	f, err := statecol.Open(rowio.UnrecordedFile(path))
	if err != nil {
		t.Fatal(err)
	}
	rg := f.RowGroups()[0]
	c, _ := f.Column(rg, "info_hash_v2")
	if err := statecol.Bytes(c, int(rg.NumRows()), func(int, []byte) {}); err == nil {
		t.Fatal("reading the spoilt column succeeded: the test proves nothing")
	}
	f.Close()

	jobs, _ := runPlan(t, dir, ms(t0)+day, 100, nil)
	if len(jobs) != 2 || jobs[0].InfoHashV2 != nil || jobs[1].InfoHashV2 != nil {
		t.Errorf("jobs = %v, want both hashes without info_hash_v2", jobs)
	}
}

// spoilColumn damages the data of column name (in every row group of the
// Parquet file at path): the last byte of its last page, which the page's
// CRC then refuses. Page headers and the footer stay intact, as
// statecol.Open checks those.
func spoilColumn(t *testing.T, path, name string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	l, ok := pf.Schema().Lookup(name)
	if !ok {
		t.Fatalf("%s: no column %s", path, name)
	}
	for _, rg := range pf.Metadata().RowGroups {
		md := rg.Columns[l.ColumnIndex].MetaData
		start := md.DataPageOffset
		if md.DictionaryPageOffset > 0 {
			start = min(start, md.DictionaryPageOffset)
		}
		data[start+md.TotalCompressedSize-1] ^= 0xff
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
