package dedup

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// editFooter returns file with its metadata changed by edit.
func editFooter(t *testing.T, file []byte, edit func(*format.FileMetaData)) []byte {
	t.Helper()
	return rowiotest.EditFooter(t, file, edit)
}

// Every damaged or crafted input fails the run with one line naming the
// file and the problem, exit status 2, and commits nothing, even with a
// good input beside it.
func TestCorruptInputsCommitNothing(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	if _, err := run(t, data, nil, writeObs(t, dir, genObs(4, 100, 50))); err != nil {
		t.Fatal(err)
	}
	good := readBack(t, writeObs(t, dir, genObs(5, 3000, 1000)))
	footerAt := len(good) - 8 - int(binary.LittleEndian.Uint32(good[len(good)-8:]))
	put := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	smashed := bytes.Clone(good)
	copy(smashed[footerAt+20:], bytes.Repeat([]byte{0xff}, 12))
	type ih19 struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	type ihFixed20 struct {
		InfoHash   [20]byte `parquet:"info_hash"`
		ObservedAt int64    `parquet:"observed_at,timestamp(millisecond)"`
	}
	type ihFixed19 struct {
		InfoHash   [19]byte `parquet:"info_hash"`
		ObservedAt int64    `parquet:"observed_at,timestamp(millisecond)"`
	}
	type plainMillis struct { // as DuckDB writes a BIGINT: no logical type
		InfoHash   [20]byte `parquet:"info_hash"`
		ObservedAt int64    `parquet:"observed_at"`
	}
	type ihList struct { // DuckDB's [info_hash]: a LIST, not a missing column
		InfoHash   [][]byte `parquet:"info_hash,list"`
		ObservedAt int64    `parquet:"observed_at,timestamp(millisecond)"`
	}
	type ihRepeated struct { // a bare repeated leaf: parquet-go read each row's first hash
		InfoHash   [][20]byte `parquet:"info_hash"`
		ObservedAt int64      `parquet:"observed_at,timestamp(millisecond)"`
	}
	type sourceRepeated struct {
		InfoHash   [20]byte `parquet:"info_hash"`
		ObservedAt int64    `parquet:"observed_at,timestamp(millisecond)"`
		Source     []string `parquet:"source"`
	}
	type ihTwice struct { // which is info_hash cannot be told
		InfoHash   []byte `parquet:"info_hash"`
		InfoHashUp []byte `parquet:"INFO_HASH"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	}
	type ihInt struct {
		InfoHash   int64 `parquet:"info_hash"`
		ObservedAt int64 `parquet:"observed_at,timestamp(millisecond)"`
	}
	at := t0.UnixMilli()
	var arrowFields bytes.Buffer // a schema whose fields vector claims 2^32-1 entries
	w, _ := rowio.Create[schema.Observation]("-", &arrowFields)
	w.Write(genObs(6, 3, 3))
	w.Close()
	crafted := bytes.Clone(arrowFields.Bytes())
	if i := fieldsVector(crafted); i > 0 {
		binary.LittleEndian.PutUint32(crafted[i:], 0xffffffff)
	} else {
		t.Fatal("no fields vector found")
	}

	arrowOf := func(write func(w *bytes.Buffer) error) []byte {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	state := []schema.State{{InfoHash: schema.Hash{1}, HashType: schema.HashV1, FirstSeen: at, LastSeen: at, SeenCount: 1}}
	results := []schema.Result{{InfoHash: schema.Hash{1}, HashType: schema.HashV1, AttemptedAt: at, Outcome: schema.OutcomeNoPeers}}
	stateArrow := arrowOf(func(buf *bytes.Buffer) error { return writeArrowRows(buf, state) })
	resultsArrow := arrowOf(func(buf *bytes.Buffer) error { return writeArrowRows(buf, results) })

	tests := []struct{ name, path, want string }{
		// A state file or fetch's results says what it is, as Parquet and as Arrow alike.
		{"state as Parquet", put("state.parquet", writeRowsBytes(t, dir, state)),
			`missing column "observed_at" (is it state? dedup takes observations or a hash list)`},
		{"state as Arrow", put("state.arrow", stateArrow),
			`missing column "observed_at" (is it state? dedup takes observations or a hash list)`},
		{"results as Arrow", put("results.arrow", resultsArrow),
			`missing column "observed_at" (is it results? dedup takes observations or a hash list)`},
		{"truncated at 4", put("t4.parquet", good[:4]), "corrupt Parquet"},
		{"truncated at 100", put("t100.parquet", good[:100]), "corrupt Parquet: no PAR1 magic at the end"},
		{"truncated in half", put("thalf.parquet", good[:len(good)/2]), "corrupt Parquet"},
		{"truncated footer", put("tfoot.parquet", good[:len(good)-9]), "corrupt Parquet"},
		{"last byte cut", put("t1.parquet", good[:len(good)-1]), "corrupt Parquet"},
		{"footer bits flipped", put("flip.parquet", smashed), "corrupt Parquet"},
		{"4 PB declared", put("huge.parquet", editFooter(t, good, func(md *format.FileMetaData) {
			md.NumRows = 4 << 50
			md.RowGroups[0].NumRows = 4 << 50
		})), "over a reading limit: the file declares 4503599627370496 rows"},
		{"chunk past the end", put("past.parquet", editFooter(t, good, func(md *format.FileMetaData) {
			md.RowGroups[0].Columns[0].MetaData.TotalCompressedSize = 1 << 40
		})), "extend past the end"},
		{"info_hash INT64", put("int.parquet", writeRowsBytes(t, dir, []ihInt{{1, at}})),
			`column "info_hash" is INT64, want FIXED_LEN_BYTE_ARRAY(20), BLOB or hex VARCHAR`},
		{"info_hash of 19 bytes", put("b19.parquet", writeRowsBytes(t, dir, []ih19{{bytes.Repeat([]byte{1}, 19), at}})),
			"row 1: info_hash has 19 bytes"},
		{"info_hash FIXED(19)", put("f19.parquet", writeRowsBytes(t, dir, []ihFixed19{{ObservedAt: at}})),
			"row 1: info_hash has 19 bytes"},
		{"observed_at in 1990", put("t1990.parquet", writeRowsBytes(t, dir, []ihFixed20{{InfoHash: [20]byte{1}, ObservedAt: 660009600000}})),
			"row 1: observed_at 660009600000 ms (1990-12-01T00:00:00Z) is outside 2001-01-01..2200-01-01"},
		{"plain INT64 of seconds", put("secs.parquet", writeRowsBytes(t, dir, []plainMillis{{InfoHash: [20]byte{1}, ObservedAt: 1733000000}})),
			"row 1: observed_at 1733000000 ms (1970-01-21T01:23:20Z) is outside 2001-01-01..2200-01-01"},
		{"info_hash a LIST", put("list.parquet", writeRowsBytes(t, dir, []ihList{{[][]byte{bytes.Repeat([]byte{1}, 20)}, at}})),
			`column "info_hash" is a LIST, want FIXED_LEN_BYTE_ARRAY(20), BLOB or hex VARCHAR`},
		{"info_hash REPEATED", put("repeated.parquet", writeRowsBytes(t, dir, []ihRepeated{{[][20]byte{{1}, {2}}, at}, {[][20]byte{{3}}, at}})),
			`column "info_hash" is REPEATED, want FIXED_LEN_BYTE_ARRAY(20), BLOB or hex VARCHAR`},
		{"source REPEATED", put("srcrep.parquet", writeRowsBytes(t, dir, []sourceRepeated{{[20]byte{1}, at, []string{"import", "get_peers"}}})),
			`column "source" is REPEATED, want one value a row`},
		{"info_hash and INFO_HASH", put("twice.parquet", writeRowsBytes(t, dir, []ihTwice{{bytes.Repeat([]byte{1}, 20), bytes.Repeat([]byte{2}, 20), at}})),
			`columns "info_hash" and "INFO_HASH" differ only in case: which is info_hash cannot be told`},
		{"LZ4_RAW data not LZ4", put("lz4.parquet", editFooter(t, writeRowsBytes(t, dir, genObs(7, 100, 10), parquet.Compression(&zstd.Codec{})),
			func(md *format.FileMetaData) { md.RowGroups[0].Columns[0].MetaData.Codec = format.Lz4Raw })),
			"corrupt Parquet: row group 0 column \"info_hash\": page at offset 4: LZ4_RAW: match offset"},
		{"arrow fields lie", put("fields.arrow", crafted), "not an Arrow IPC stream: malformed message metadata"},
		{"info_hash_v2 not the 32-byte info_hash", put("v2.parquet", writeRowsBytes(t, dir, []blobMicros{
			{InfoHash: bytes.Repeat([]byte{1}, 32), InfoHashV2: bytes.Repeat([]byte{2}, 32), ObservedAt: at * 1000}})),
			"row 1: info_hash_v2 differs from the row's 32-byte info_hash 0101"},
		{"info_hash_v2 not the 20-byte info_hash's", put("v2short.parquet", writeRowsBytes(t, dir, []blobMicros{
			{InfoHash: bytes.Repeat([]byte{1}, 20), InfoHashV2: bytes.Repeat([]byte{2}, 32), ObservedAt: at * 1000}})),
			"row 1: info_hash_v2 0202"},
		{"fetch's results", put("results.parquet", writeRowsBytes(t, dir, []schema.Result{{InfoHash: schema.Hash{1}, HashType: schema.HashV1,
			AttemptedAt: at, Outcome: schema.OutcomeNoPeers}})),
			`missing column "observed_at" (is it results? dedup takes observations or a hash list)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh := writeObs(t, dir, genObs(99, 10, 10))
			_, err := run(t, data, nil, fresh, tt.path)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.HasPrefix(msg, "dedup: "+tt.path+": ") || !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("err = %q, want one line naming %s and %q", msg, tt.path, tt.want)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("exit code %d, want %d", exitcode.Of(err), exitcode.Usage)
			}
			d, _ := dataset.Open(context.Background(), data, dataset.OpenOptions{})
			if m, _ := d.Current(); m.Snapshot != 1 {
				t.Fatalf("bad input committed snapshot %d", m.Snapshot)
			}
		})
	}
}

func writeRowsBytes[T any](t *testing.T, dir string, rows []T, opts ...parquet.WriterOption) []byte {
	t.Helper()
	p := filepath.Join(dir, "rows.tmp")
	w, err := rowio.Create[T](p, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return readBack(t, p)
}

// fieldsVector finds the length word of the schema's fields vector in an
// Arrow IPC stream written by rowio: the first message is the schema.
func fieldsVector(b []byte) int {
	meta := b[8:]
	u32 := func(i int) int { return int(binary.LittleEndian.Uint32(meta[i:])) }
	vtable := func(t int) int { return t - int(int32(binary.LittleEndian.Uint32(meta[t:]))) }
	field := func(t, slot int) int {
		vt := vtable(t)
		if 4+2*slot >= int(binary.LittleEndian.Uint16(meta[vt:])) {
			return 0
		}
		return int(binary.LittleEndian.Uint16(meta[vt+4+2*slot:]))
	}
	msg := u32(0)
	h := msg + field(msg, 2)
	schemaTable := h + u32(h)
	f := schemaTable + field(schemaTable, 1)
	return 8 + f + u32(f)
}

// Bad input on stdin is spooled into the inbox like any stdin input; it
// must be set aside, not retried (and failed) by every later run.
func TestBadStdinDoesNotBlockLaterRuns(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	good := readBack(t, writeObs(t, dir, genObs(8, 200, 50)))
	for _, tt := range []struct{ name, stdin, want string }{
		{"corrupt parquet", string(good[:len(good)-5]), "corrupt Parquet"},
		{"binary junk", "\x00\x01junk", "neither Parquet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t, data, func(o *Options) { o.Stdin = strings.NewReader(tt.stdin) }, "-")
			if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tt.want) ||
				!namesSetAside(err, data) {
				t.Fatalf("err = %v", err)
			}
			if _, err := run(t, data, nil, writeObs(t, dir, genObs(9, 10, 10))); err != nil {
				t.Fatalf("a later run with good input: %v", err)
			}
		})
	}
	ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
	if len(ents) != 2 || !strings.HasSuffix(ents[0].Name(), ".bad") || !strings.HasSuffix(ents[1].Name(), ".bad") {
		t.Fatalf("inbox holds %v, want the two bad inputs set aside", ents)
	}
}

// Empty stdin is bad input too, but holds nothing worth keeping: it
// leaves no .bad file for status to list from then on.
func TestEmptyStdinLeavesNothing(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	_, err := run(t, data, func(o *Options) { o.Stdin = strings.NewReader("") }, "-")
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "dedup: stdin: empty input") ||
		strings.Contains(err.Error(), "set aside") {
		t.Fatalf("err = %v, want empty input, nothing set aside", err)
	}
	ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
	for _, e := range ents {
		t.Errorf("left in the inbox: %s", e.Name())
	}
}

// TestBloomFPOutOfRange: a false-positive rate that sizes no Bloom filter
// is bad input before the dataset is touched. NaN passed the old check
// (NaN <= 0 and NaN >= 1 are both false) and panicked making the filter.
func TestBloomFPOutOfRange(t *testing.T) {
	dir := t.TempDir()
	in := writeObs(t, dir, genObs(6, 100, 50))
	for _, fp := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -0.5, 2} {
		t.Run(fmt.Sprint(fp), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			_, err := run(t, data, func(o *Options) { o.BloomFP = fp }, in)
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "--bloom-fp") {
				t.Fatalf("err %v (exit %d), want bad input naming --bloom-fp", err, exitcode.Of(err))
			}
			if _, err := os.Stat(data); err == nil {
				t.Fatalf("%s was created", data)
			}
		})
	}
}

// writeArrowRows writes rows to w as an Arrow IPC stream.
func writeArrowRows[T any](w *bytes.Buffer, rows []T) error {
	aw, err := rowio.Create[T]("-", w)
	if err != nil {
		return err
	}
	if err := aw.Write(rows); err != nil {
		return err
	}
	return aw.Close()
}

// eachParquetReader runs f as a subtest name+"/columns" with the column
// reader (fastPath) and name+"/rows" with the row reader, restoring
// fastPath after.
func eachParquetReader(t *testing.T, name string, f func(t *testing.T)) {
	defer func() { fastPath = true }()
	for _, fast := range []bool{true, false} {
		t.Run(name+map[bool]string{true: "/columns", false: "/rows"}[fast], func(t *testing.T) {
			fastPath = fast
			f(t)
		})
	}
}

// readAs reads the input file at p, named name, into a new batch at t0
// and returns readInput's error (a file probe refuses fails the test).
func readAs(t *testing.T, p, name string) error {
	t.Helper()
	in, err := probe(p, name, "")
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch(3600_000)
	defer b.release()
	_, err = readInput(context.Background(), in, t0.UnixMilli(), b)
	return err
}
