package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/pipeline/dedup"
)

// fixture builds a dataset from a hash list with awkward content.
func fixture(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	hashes := []string{
		"0123456789abcdef0123456789abcdef01234567",
		"8023456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", // v2
		"ff23456789abcdef0123456789abcdef01234567",
	}
	list := filepath.Join(dir, "h.txt")
	os.WriteFile(list, []byte(strings.Join(hashes, "\n")+"\n"), 0o644)
	o := dedup.DefaultOptions()
	o.Data, o.Inputs, o.Now = filepath.Join(dir, "ds"), []string{list}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := dedup.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o.Data, hashes
}

func export(t *testing.T, data, table, format string, mod func(*Options)) []byte {
	t.Helper()
	var out bytes.Buffer
	o := DefaultOptions()
	o.Data, o.Table, o.Format, o.Stdout = data, table, format, &out
	if mod != nil {
		mod(&o)
	}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	datasettest.NotInUse(t, data) // export closed the dataset
	return out.Bytes()
}

func TestFormats(t *testing.T) {
	data, hashes := fixture(t)
	for _, table := range Tables[:1] {
		t.Run("csv", func(t *testing.T) {
			recs, err := csv.NewReader(bytes.NewReader(export(t, data, table, "csv", nil))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 4 || recs[0][0] != "info_hash" || recs[1][0] != hashes[0] {
				t.Fatalf("csv %q", recs)
			}
			if recs[1][3] != "2026-01-02T03:04:05.000Z" {
				t.Fatalf("first_seen %q, want RFC 3339 UTC", recs[1][3])
			}
		})
		t.Run("jsonl", func(t *testing.T) {
			sc := bufio.NewScanner(bytes.NewReader(export(t, data, table, "jsonl", nil)))
			n := 0
			for sc.Scan() {
				var m map[string]any
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatal(err)
				}
				if h := m["info_hash"].(string); len(h) != 40 || strings.ToLower(h) != h {
					t.Fatalf("hash %q", h)
				}
				n++
			}
			if n != 3 {
				t.Fatalf("%d lines", n)
			}
		})
		t.Run("es-bulk", func(t *testing.T) {
			const index = `logs-"<&>"-ü\\x` // escaped in the action lines
			lines := strings.Split(strings.TrimSpace(string(export(t, data, table, "es-bulk", func(o *Options) { o.ES = index }))), "\n")
			if len(lines) != 6 {
				t.Fatalf("%d lines", len(lines))
			}
			for i := 0; i < len(lines); i += 2 {
				var action struct {
					Index struct {
						ID    string `json:"_id"`
						Index string `json:"_index"`
					}
				}
				var doc map[string]any
				if json.Unmarshal([]byte(lines[i]), &action) != nil || json.Unmarshal([]byte(lines[i+1]), &doc) != nil {
					t.Fatalf("lines %d/%d do not parse", i, i+1)
				}
				if action.Index.ID == "" || action.Index.ID != doc["info_hash"] || action.Index.Index != index {
					t.Fatalf("action id %q index %q, doc %v", action.Index.ID, action.Index.Index, doc["info_hash"])
				}
			}
		})
		t.Run("magnet", func(t *testing.T) {
			lines := strings.Split(strings.TrimSpace(string(export(t, data, table, "magnet", nil))), "\n")
			for i, l := range lines {
				u, err := url.Parse(l)
				if err != nil || u.Scheme != "magnet" {
					t.Fatalf("line %d %q: %v", i, l, err)
				}
				if xt := u.Query().Get("xt"); !strings.HasSuffix(xt, hashes[i]) && !strings.HasSuffix(xt, "1220"+hashes[i]) {
					t.Fatalf("xt %q for %s", xt, hashes[i])
				}
			}
		})
		t.Run("parquet and arrow", func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.parquet")
			export(t, data, table, "parquet", func(o *Options) { o.Output = p })
			r, err := rowio.Open[schema.State](p, nil)
			if err != nil {
				t.Fatal(err)
			}
			rows, _ := r.ReadAll()
			r.Close()
			ar, err := rowio.Open[schema.State]("-", bytes.NewReader(export(t, data, table, "arrow", nil)))
			if err != nil {
				t.Fatal(err)
			}
			arows, _ := ar.ReadAll()
			if len(rows) != 3 || len(arows) != 3 || rows[1].HashType != schema.HashV2 || arows[1].InfoHash != rows[1].InfoHash {
				t.Fatalf("parquet %d rows, arrow %d", len(rows), len(arows))
			}
		})
	}
}

func TestFiltersAndBlocklist(t *testing.T) {
	data, hashes := fixture(t)
	count := func(mod func(*Options)) int {
		return strings.Count(string(export(t, data, "state", "magnet", mod)), "\n")
	}
	tests := []struct {
		name string
		mod  func(*Options)
		want int
	}{
		{"all", nil, 3},
		{"prefix", func(o *Options) { o.Prefixes = []string{"ff"} }, 1},
		{"prefix nibble", func(o *Options) { o.Prefixes = []string{"0", "8"} }, 2},
		{"status new", func(o *Options) { o.Status = []string{"new"} }, 3},
		{"status failed", func(o *Options) { o.Status = []string{"failed"} }, 0},
		// New hashes are hot: a hash is kept when its tier is any given.
		{"tier hot", func(o *Options) { o.Tiers = []string{"hot"} }, 3},
		{"tier cold", func(o *Options) { o.Tiers = []string{"cold"} }, 0},
		{"tier cold or hot", func(o *Options) { o.Tiers = []string{"cold", "hot"} }, 3},
		{"since later", func(o *Options) { o.Since = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }, 0},
		{"blocklist", func(o *Options) { o.Blocklist = func(h schema.Hash) bool { return schema.Hex(h) == hashes[2] } }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := count(tt.mod); got != tt.want {
				t.Fatalf("%d rows, want %d", got, tt.want)
			}
		})
	}
}

func TestBadOptions(t *testing.T) {
	data, _ := fixture(t)
	for _, mod := range []func(*Options){
		func(o *Options) { o.Format = "xml" },
		func(o *Options) { o.Table = "nope" },
		func(o *Options) { o.Prefixes = []string{"zz"} },
		func(o *Options) { o.Data = t.TempDir() },
	} {
		o := DefaultOptions()
		o.Data, o.Stdout = data, &bytes.Buffer{}
		mod(&o)
		if _, err := Run(context.Background(), o); exitcode.Of(err) != exitcode.Usage {
			t.Fatalf("err %v: exit %d, want 2", err, exitcode.Of(err))
		}
	}
}

// TestSortsPartitionsOfSeveralFiles: a partition that several dedup runs
// left in several files (each sorted, their hashes interleaved) is
// exported sorted by info_hash as a whole, in every table.
func TestSortsPartitionsOfSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	var all []string
	for run := range 3 {
		var lines []string
		for i := range 40 {
			// Partition 5a; runs interleave in hash order.
			h := fmt.Sprintf("5a%02x%02x", i, run) + strings.Repeat("0", 34)
			lines = append(lines, h)
			all = append(all, h)
		}
		list := filepath.Join(dir, fmt.Sprintf("h%d.txt", run))
		os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		o := dedup.DefaultOptions()
		o.Data, o.Inputs, o.Now = data, []string{list}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		if _, err := dedup.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(data, "state", "current", "prefix=5a", "*.parquet")); len(files) < 2 {
		t.Fatalf("the fixture left %d files in the partition; the test needs several", len(files))
	}
	slices.Sort(all)
	for _, table := range []string{"state", "catalog"} {
		recs, err := csv.NewReader(bytes.NewReader(export(t, data, table, "csv", nil))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs[1:] {
			got = append(got, r[0])
		}
		if !slices.Equal(got, all) {
			t.Errorf("%s: info_hash column %v..., want %v...", table, got[:min(4, len(got))], all[:4])
		}
	}
}

// TestParquetKeepsNulls: a Parquet export writes a missing info_hash_v2
// as a null, also after a row that has one in the same partition
// (parquet-go's batch write made the rows after it empty BLOBs).
func TestParquetKeepsNulls(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "h.txt")
	os.WriteFile(list, []byte("aa00000000000000000000000000000000000000\n"+
		"aa01000000000000000000000000000000000000000000000000000000000000\n"+
		"aa02000000000000000000000000000000000000\naa03000000000000000000000000000000000000\n"), 0o644)
	o := dedup.DefaultOptions()
	o.Data, o.Inputs, o.Now = filepath.Join(dir, "ds"), []string{list}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := dedup.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "state.parquet")
	os.WriteFile(out, export(t, o.Data, "state", "parquet", nil), 0o644)
	rows := readParquetNulls(t, out, "info_hash_v2")
	want := []bool{true, false, true, true}
	if !slices.Equal(rows, want) {
		t.Fatalf("info_hash_v2 null by row: %v, want %v", rows, want)
	}
}

// readParquetNulls reports, row by row, whether column col is null.
func readParquetNulls(t *testing.T, path, col string) []bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	leaf, ok := pf.Schema().Lookup(col)
	if !ok {
		t.Fatalf("no column %s", col)
	}
	var nulls []bool
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[leaf.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if err != nil {
				break
			}
			v := make([]parquet.Value, p.NumValues())
			n, _ := p.Values().ReadValues(v)
			for _, x := range v[:n] {
				nulls = append(nulls, x.IsNull())
			}
		}
		pages.Close()
	}
	return nulls
}
