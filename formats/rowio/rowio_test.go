package rowio

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

func sampleResults() []schema.Result {
	return []schema.Result{
		{InfoHash: schema.Hash{1}, HashType: 1, Attempt: 2, LeaseID: "L1", AttemptedAt: 1700000000123,
			Outcome: schema.OutcomeOK, PeersFound: 3, PeersTried: 2,
			PeerFailures: []schema.PeerFailure{{Addr: "127.0.0.1:1", Class: "rejected", At: 1700000000001}},
			ServedBy:     "127.0.0.1:2", MetadataSize: 99,
			ResultMeta: schema.OKMeta(schema.Meta{Name: new("n"), NameRaw: []byte("n"), NameUTF8Valid: true, TotalSize: new(int64(5)), FileCount: new(int32(1)),
				Files: []schema.File{{Path: "a/b", PathRaw: []byte("a/b"), Length: 5}}, InfoBytes: []byte("d4:name1:ne")})},
		{InfoHash: schema.Hash{2}, HashType: 1, AttemptedAt: 1700000000999, Outcome: schema.OutcomeNoPeers},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"parquet", "arrow"} {
		t.Run(name, func(t *testing.T) {
			var pipe bytes.Buffer
			path := "-"
			if name == "parquet" {
				path = filepath.Join(t.TempDir(), "r.parquet")
			}
			w, err := Create[schema.Result](path, &pipe)
			if err != nil {
				t.Fatal(err)
			}
			in := sampleResults()
			if err := w.Write(in[:1]); err != nil {
				t.Fatal(err)
			}
			if err := w.Write(in[1:]); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := Open[schema.Result](path, &pipe)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			// parquet-go reads empty lists as nil or empty; normalise.
			for i := range got {
				if len(got[i].PeerFailures) == 0 {
					got[i].PeerFailures = nil
				}
				if len(got[i].Files) == 0 {
					got[i].Files = nil
				}
			}
			if !reflect.DeepEqual(got, in) {
				t.Fatalf("round trip mismatch:\n got %+v\nwant %+v", got, in)
			}
		})
	}
}

func TestParquetAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, err := Create[schema.Job](filepath.Join(dir, "j.parquet"), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]schema.Job{{LeaseID: "x"}})
	w.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %v", ents)
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	notParquet := filepath.Join(dir, "x.parquet")
	os.WriteFile(notParquet, []byte("hello, this is not parquet at all"), 0o644)
	// A Parquet file of another row type lacks the required columns.
	wrong := filepath.Join(dir, "wrong.parquet")
	w, _ := Create[schema.PeerPenalty](wrong, nil)
	w.Write([]schema.PeerPenalty{{Addr: "a"}})
	w.Close()
	// A truncated copy of a good file.
	good := filepath.Join(dir, "good.parquet")
	gw, _ := Create[schema.Job](good, nil)
	gw.Write([]schema.Job{{LeaseID: "x"}})
	gw.Close()
	b, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc.parquet")
	os.WriteFile(trunc, b[:len(b)/2], 0o644)

	tests := []struct {
		name, path, want string
		stdin            string
		schemaErr        bool
	}{
		{"not parquet", notParquet, "corrupt Parquet: no PAR1 magic", "", false},
		{"truncated", trunc, "corrupt Parquet: no PAR1 magic at the end", "", false},
		{"wrong schema", wrong, "missing required column \"info_hash\"", "", true},
		{"empty stdin", "-", "empty input", "", false},
		{"garbage stdin", "-", "not an Arrow IPC stream", "garbage garbage garbage", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open[schema.Job](tt.path, strings.NewReader(tt.stdin))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.schemaErr != errors.Is(err, ErrSchema) {
				t.Fatalf("ErrSchema = %v", errors.Is(err, ErrSchema))
			}
		})
	}
}

func FuzzArrowRead(f *testing.F) {
	FailOnOwnPanics(f) // a panic of our own code is a bug, not bad input
	var buf, res bytes.Buffer
	w, _ := Create[schema.Observation]("-", &buf)
	w.Write([]schema.Observation{{InfoHash: schema.Hash{9}, Source: "import", ObservedAt: 5}})
	w.Close()
	rw, _ := Create[schema.Result]("-", &res)
	rw.Write(sampleResults())
	rw.Close()
	f.Add(buf.Bytes())
	f.Add(res.Bytes())
	f.Add(res.Bytes()[:res.Len()/2])
	f.Add([]byte("ARROW1"))
	if b, err := os.ReadFile("testdata/arrow/offsets-decrease.arrow"); err == nil {
		f.Add(b) // value offsets that decrease (TestArrowOffsets)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := OpenArrow[schema.Result]("fuzz", bytes.NewReader(data))
		var rows []schema.Result
		if err == nil {
			defer r.Close()
			rows, err = r.ReadAll()
		}
		if err != nil && (strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "fuzz: ")) {
			t.Fatalf("error not one line naming the input: %q", err)
		}
		// A cut is where the input ends, inside a message after whole
		// ones, whose rows were all read.
		if ce, ok := AsCut(err); ok && (ce.Size != int64(len(data)) || ce.Whole >= ce.Size || ce.Rows != int64(len(rows))) {
			t.Fatalf("%+v: %d bytes, %d rows read", *ce, len(data), len(rows))
		}
	})
}

// A null optional []byte reads as nil in every batch, not as the empty
// leftover of the row that used the buffer before.
func TestNullBytesStayNilAcrossBatches(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.parquet")
	w, _ := Create[schema.Result](p, nil)
	var rows []schema.Result
	for i := 0; i < 10; i++ {
		rows = append(rows, schema.Result{Outcome: "ok", ServedBy: "a", ResultMeta: schema.ResultMeta{InfoBytes: []byte("d1:ae"), NameRaw: []byte("n")}},
			schema.Result{Outcome: "no_peers"})
	}
	w.Write(rows)
	w.Close()
	r, err := Open[schema.Result](p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]schema.Result, 3)
	for {
		n, err := r.Read(buf)
		for _, x := range buf[:n] {
			if x.Outcome == "no_peers" && (x.InfoBytes != nil || x.NameRaw != nil || x.ServedBy != "") {
				t.Fatalf("null columns of a failure read as %#v %#v %q", x.InfoBytes, x.NameRaw, x.ServedBy)
			}
		}
		if err != nil {
			break
		}
	}
}

func TestNormalizeNulls(t *testing.T) {
	rows := []schema.Result{{ResultMeta: schema.ResultMeta{InfoBytes: []byte{}, NameRaw: []byte("x")}, ServedBy: ""}}
	NormalizeNulls(rows)
	if rows[0].InfoBytes != nil || string(rows[0].NameRaw) != "x" {
		t.Fatalf("%#v %#v", rows[0].InfoBytes, rows[0].NameRaw)
	}
}
