package obsgen

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

func TestWriteParquetNative(t *testing.T) {
	c := small(nil)
	want, wantTruth := generate(t, c)
	path := filepath.Join(t.TempDir(), "obs.parquet")
	tr, err := WriteParquet(context.Background(), path, c, Native)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Distinct != wantTruth.Distinct || tr.Rows != wantTruth.Rows {
		t.Fatalf("truth %+v, want %+v", tr, wantTruth)
	}
	r, err := rowio.Open[schema.Observation](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(want))
	}
	for i := range got {
		if !obsEqual(got[i], want[i]) {
			t.Fatalf("row %d: read %+v, generated %+v", i, got[i], want[i])
		}
	}
}

func TestWriteParquetDuckDB(t *testing.T) {
	c := small(func(c *Config) { c.Rows = 5_000; c.V2PerMille = 200 })
	want, _ := generate(t, c)
	path := filepath.Join(t.TempDir(), "duck.parquet")
	if _, err := WriteParquet(context.Background(), path, c, DuckDB); err != nil {
		t.Fatal(err)
	}
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
	// The physical layout is the point of this style.
	for _, tc := range []struct{ col, want string }{
		{"info_hash", "optional binary info_hash"},
		{"observed_at", "optional int64 observed_at (TIMESTAMP(isAdjustedToUTC=false,unit=MICROS))"},
	} {
		if s := pf.Schema().String(); !strings.Contains(s, tc.want) {
			t.Errorf("column %s: schema lacks %q:\n%s", tc.col, tc.want, s)
		}
	}
	r := parquet.NewGenericReader[DuckObservation](f)
	got := make([]DuckObservation, len(want)+1)
	n, err := r.Read(got)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if n != len(want) {
		t.Fatalf("read %d rows, wrote %d", n, len(want))
	}
	for i, d := range got[:n] {
		w := want[i]
		if string(d.InfoHash) != string(w.InfoHash[:]) || d.ObservedAt != w.ObservedAt*1000 ||
			string(d.InfoHashV2) != string(w.InfoHashV2) || d.HashType != w.HashType || d.Source != w.Source {
			t.Fatalf("row %d: read %+v, generated %+v", i, d, w)
		}
	}
}

func TestWriteText(t *testing.T) {
	for name, format := range map[string]TextFormat{"hex": Hex, "magnet": Magnet, "mixed": Mixed} {
		t.Run(name, func(t *testing.T) {
			c := small(func(c *Config) { c.Rows = 3_000 })
			want, wantTruth := generate(t, c)
			path := filepath.Join(t.TempDir(), "hashes.txt")
			tr, err := WriteText(context.Background(), path, c, format)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Distinct != wantTruth.Distinct {
				t.Fatalf("distinct %d, want %d", tr.Distinct, wantTruth.Distinct)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			var i int
			kinds := map[string]int{}
			for ; sc.Scan(); i++ {
				line := sc.Text()
				hx := line
				if rest, ok := strings.CutPrefix(line, "magnet:?xt=urn:btih:"); ok {
					hx, _, _ = strings.Cut(rest, "&")
					kinds["magnet"]++
				} else if strings.ToLower(line) != line {
					kinds["upper"]++
				} else {
					kinds["hex"]++
				}
				h, _, _, err := schema.ParseHex(strings.ToLower(hx))
				if err != nil {
					t.Fatalf("line %d %q: %v", i+1, line, err)
				}
				if h != want[i].InfoHash {
					t.Fatalf("line %d: hash %x, want %x", i+1, h, want[i].InfoHash)
				}
			}
			if i != len(want) {
				t.Fatalf("%d lines, want %d", i, len(want))
			}
			if format == Mixed && (kinds["magnet"] == 0 || kinds["upper"] == 0 || kinds["hex"] == 0) {
				t.Fatalf("mixed format gave only %v", kinds)
			}
		})
	}
}

func TestTruthJSON(t *testing.T) {
	_, tr := generate(t, small(nil))
	path := filepath.Join(t.TempDir(), "truth.json")
	if err := tr.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back["distinct"].(float64) != float64(tr.Distinct) || back["min_observed_at"] != tr.MinTime().Format("2006-01-02T15:04:05.999999999Z07:00") {
		t.Fatalf("JSON %s does not match %+v", b, tr)
	}
}

func TestWriteCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	path := filepath.Join(dir, "obs.parquet")
	if _, err := WriteParquet(ctx, path, small(nil), Native); err == nil {
		t.Fatal("a cancelled write succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a cancelled write left %v", ents)
	}
}
