package statecol_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/schema/schematest"
	"github.com/infohash/infohash/formats/statecol"
)

// writeStateFile writes rows with statecol's writer to a new file.
func writeStateFile(t *testing.T, rows []schema.State) string {
	t.Helper()
	var buf bytes.Buffer
	if err := statecol.WriteState(&buf, rows); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "part.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// stateReaders are the ways a state file is opened.
var stateReaders = []struct {
	name string
	read func(df rowio.DataFile) error
}{
	{"Open", func(df rowio.DataFile) error {
		f, err := statecol.Open(df)
		if err == nil {
			f.Close()
		}
		return err
	}},
	{"ReadStateFile", func(df rowio.DataFile) error {
		_, err := statecol.ReadStateFile(df)
		return err
	}},
	{"ReadUntrustedStateFile", func(df rowio.DataFile) error {
		_, err := statecol.ReadUntrustedStateFile(df)
		return err
	}},
	{"ReadState", func(df rowio.DataFile) error {
		return statecol.ReadState(df, func([]schema.State) error { return nil })
	}},
}

// TestDamagedFooter: one flipped bit in the footer of a state file that
// renames a column, or changes its type, fails every reader with an error
// that names the file once and says what is wrong. Such a column used to
// read as zeros (hash_type 0, no last_source, 0 attempts) without a word,
// and the next commit wrote the zeros back with a valid checksum.
func TestDamagedFooter(t *testing.T) {
	type damage struct {
		name   string
		damage func(t *testing.T, path string)
		want   string
	}
	var cases []damage
	for _, f := range parquet.SchemaOf(schema.State{}).Fields() {
		col := f.Name()
		cases = append(cases, damage{"schema's " + col, func(t *testing.T, p string) { datasettest.RenameInFooter(t, p, col, 0) },
			`no column "` + col})
	}
	cases = append(cases,
		damage{"schema's list of avoid_peers", func(t *testing.T, p string) { datasettest.RenameInFooter(t, p, "element", 0) },
			`no column "avoid_peers.list.element"`},
		damage{"column chunk's hash_type", func(t *testing.T, p string) { datasettest.RenameInFooter(t, p, "hash_type", 1) },
			`row group 0: column chunk 2 is "hash_typd", the schema's column 2 is "hash_type"`},
		damage{"column chunk's tier", func(t *testing.T, p string) { datasettest.RenameInFooter(t, p, "tier", 1) },
			`row group 0: column chunk 15 is "ties", the schema's column 15 is "tier"`},
		// The schema element is type (INT32 = 0x02), type_length,
		// repetition_type, then the name: INT32 becomes DOUBLE.
		damage{"schema's type of hash_type", func(t *testing.T, p string) {
			datasettest.FlipBits(t, p, datasettest.FooterString(t, p, "hash_type", 0)-6, 0x02, 0x08)
		}, `column "hash_type" is DOUBLE, want INT32`},
		// A column chunk's metadata is type, encodings, path_in_schema.
		damage{"column chunk's type of hash_type", func(t *testing.T, p string) {
			datasettest.FlipBits(t, p, datasettest.FooterString(t, p, "hash_type", 1)-7, 0x02, 0x08)
		}, `row group 0: column "hash_type" is DOUBLE in its chunk, INT32 in the schema`},
	)
	rows := sampleRows(50)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeStateFile(t, rows)
			c.damage(t, path)
			for _, r := range stateReaders {
				err := r.read(rowio.UnrecordedFile(path))
				if err == nil {
					t.Fatalf("%s read the damaged file", r.name)
				}
				got := err.Error()
				if want := path + ": corrupt Parquet state file: "; !strings.HasPrefix(got, want) || strings.Count(got, path) != 1 ||
					!strings.Contains(got, c.want) || strings.Contains(got, "\n") {
					t.Errorf("%s: %q\nwant %q… with %q, naming the file once, on one line", r.name, got, want, c.want)
				}
			}
		})
	}
}

// sampleRows is sample with every row valid for a commit.
func sampleRows(n int) []schema.State {
	rows := sample(n)
	for i := range rows {
		rows[i].InfoHashV2 = nil
	}
	return rows
}

// TestOlderFormatLacks: a state file of format 1 lacks four columns, which
// read as zero values in a dataset of format 1 (as export and status read
// it, unmigrated), and are damage in one of a later format.
func TestOlderFormatLacks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.parquet")
	w, err := rowio.Create[schematest.StateV1](path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]schematest.StateV1{{InfoHash: schema.Hash{1}, HashType: 1, SeenCount: 7, MetadataStatus: "failed", Tier: "hot"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		version int
		want    string // "" if readable
	}{
		{1, ""},
		{2, `no column "backoff_step"`},
		{3, `no column "backoff_step"`},
		{dataset.FormatVersion, `no column "backoff_step"`},
	} {
		// A file of a format before 5, which recorded no footer checksum.
		lacks := (&dataset.Manifest{FormatVersion: tt.version}).StateLacks()
		rows, err := statecol.ReadStateFile(rowio.RecordedFile(path, rowio.FooterSum{}, lacks.Names()...))
		switch {
		case tt.want == "" && (err != nil || len(rows) != 1 || rows[0].SeenCount != 7 || rows[0].BackoffStep != 0 || rows[0].AvoidPeers != nil):
			t.Errorf("format %d: %+v, %v; want the row with zero values", tt.version, rows, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), path+": corrupt Parquet state file: "+tt.want)):
			t.Errorf("format %d: %v, want %q", tt.version, err, tt.want)
		}
	}
}

// stateWide is schema.State with a hash_type of INT32 values that an
// int8 cannot hold.
type stateWide struct {
	InfoHash         schema.Hash `parquet:"info_hash"`
	InfoHashV2       []byte      `parquet:"info_hash_v2,optional"`
	HashType         int32       `parquet:"hash_type,int(8)"`
	FirstSeen        int64       `parquet:"first_seen,timestamp(millisecond)"`
	LastSeen         int64       `parquet:"last_seen,timestamp(millisecond)"`
	SeenCount        int64       `parquet:"seen_count"`
	LastSource       string      `parquet:"last_source,dict"`
	Activity         float64     `parquet:"activity"`
	MetadataStatus   string      `parquet:"metadata_status,dict"`
	Attempts         int32       `parquet:"attempts"`
	LastAttempt      int64       `parquet:"last_attempt,optional,timestamp(millisecond)"`
	LastFailure      string      `parquet:"last_failure,optional,dict"`
	NextRetry        int64       `parquet:"next_retry,optional,timestamp(millisecond)"`
	LeaseID          string      `parquet:"lease_id,optional"`
	LeaseUntil       int64       `parquet:"lease_until,optional,timestamp(millisecond)"`
	Tier             string      `parquet:"tier,dict"`
	BackoffStep      int32       `parquet:"backoff_step"`
	BadMetadata      int32       `parquet:"bad_metadata"`
	Reactivated      int64       `parquet:"reactivated_at,optional,timestamp(millisecond)"`
	AvoidPeers       []string    `parquet:"avoid_peers,list"`
	Peers            []string    `parquet:"peers,list"`
	FirstSource      string      `parquet:"first_source,optional,dict"`
	LastFailureAt    int64       `parquet:"last_failure_at,optional,timestamp(millisecond)"`
	PeersAt          int64       `parquet:"peers_at,optional,timestamp(millisecond)"`
	InfoHashV2Source string      `parquet:"info_hash_v2_source,optional,dict"`
}

// TestBadValuesOnRead: a hash_type other than 1 or 2, or a status or tier
// that is none of the schema's, is an error naming the file and the row,
// not a value read as another (0 as v1, "" as new, 258 cut to 2).
func TestBadValuesOnRead(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(st *schema.State)
		wide int32 // hash_type written as an INT32 when not 0
		want string
	}{
		{"hash_type 0", func(st *schema.State) { st.HashType = 0 }, 0, "row 3: hash_type 0, want 1 or 2"},
		{"hash_type 3", func(st *schema.State) { st.HashType = 3 }, 0, "row 3: hash_type 3, want 1 or 2"},
		{"hash_type 258", nil, 258, `column "hash_type" row 3: 258 is outside int8`},
		{"no metadata_status", func(st *schema.State) { st.MetadataStatus = "" }, 0, `row 3: metadata_status "", want new, fetched or failed`},
		{"another metadata_status", func(st *schema.State) { st.MetadataStatus = "fetchee" }, 0, `row 3: metadata_status "fetchee"`},
		{"no tier", func(st *schema.State) { st.Tier = "" }, 0, `row 3: tier "", want hot or cold`},
		{"another tier", func(st *schema.State) { st.Tier = "warm" }, 0, `row 3: tier "warm"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rows := sampleRows(5)
			path := filepath.Join(t.TempDir(), "s.parquet")
			// parquet-go's writer, which checks nothing: how a file from an
			// older or foreign writer could hold such a value.
			var err error
			if tt.wide != 0 {
				wide := make([]stateWide, len(rows))
				for i, r := range rows {
					wide[i] = stateWide{r.InfoHash, r.InfoHashV2, int32(r.HashType), r.FirstSeen, r.LastSeen, r.SeenCount,
						r.LastSource, r.Activity, r.MetadataStatus, r.Attempts, r.LastAttempt, r.LastFailure, r.NextRetry,
						r.LeaseID, r.LeaseUntil, r.Tier, r.BackoffStep, r.BadMetadata, r.Reactivated, r.AvoidPeers, r.Peers,
						r.FirstSource, r.LastFailureAt, r.PeersAt, r.InfoHashV2Source}
				}
				wide[2].HashType = tt.wide
				err = parquet.WriteFile(path, wide)
			} else {
				tt.set(&rows[2])
				err = parquet.WriteFile(path, rows)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range stateReaders[1:] { // Open decodes no rows
				err := r.read(rowio.UnrecordedFile(path))
				if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: %v, want %s: …%s", r.name, err, path, tt.want)
				}
			}
		})
	}
}

// TestBadValuesNotWritten: the writers refuse a row that a reader would
// refuse, before writing anything of the file.
func TestBadValuesNotWritten(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(st *schema.State)
		want string
	}{
		{"hash_type 0", func(st *schema.State) { st.HashType = 0 }, "hash_type 0, want 1 or 2"},
		{"hash_type -1", func(st *schema.State) { st.HashType = -1 }, "hash_type -1, want 1 or 2"},
		{"no metadata_status", func(st *schema.State) { st.MetadataStatus = "" }, `metadata_status ""`},
		{"no tier", func(st *schema.State) { st.Tier = "" }, `tier ""`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rows := sampleRows(5)
			tt.set(&rows[3])
			wantErr := "statecol: row 4 (info_hash " + schema.Hex(rows[3].InfoHash) + "): " + tt.want
			var buf bytes.Buffer
			err := statecol.WriteState(&buf, rows)
			if err == nil || !strings.HasPrefix(err.Error(), wantErr) || buf.Len() != 0 {
				t.Errorf("WriteState: %v, %d bytes written; want %s…, nothing written", err, buf.Len(), wantErr)
			}
			buf.Reset()
			err = statecol.WriteStateFunc(&buf, len(rows), func(start int, dst []schema.State) { copy(dst, rows[start:]) })
			if err == nil || !strings.HasPrefix(err.Error(), wantErr) {
				t.Errorf("WriteStateFunc: %v, want %s…", err, wantErr)
			}

			// Splice: the row changed into the bad value is refused.
			good := sampleRows(5)
			src, err := statecol.Open(rowio.UnrecordedFile(writeStateFile(t, good)))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			buf.Reset()
			err = statecol.Splice(&buf, src, statecol.AllColumns,
				func(first, n int64) []int32 { return []int32{3} },
				func(first int64, sel []int32, st []schema.State) (statecol.Columns, error) {
					tt.set(&st[0])
					return statecol.ColumnsNamed("hash_type", "metadata_status", "tier"), nil
				})
			if err == nil || !strings.HasPrefix(err.Error(), wantErr) {
				t.Errorf("Splice: %v, want %s…", err, wantErr)
			}
		})
	}
}
