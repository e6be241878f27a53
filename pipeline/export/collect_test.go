package export

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/schema"
)

// commitKeepOne commits a snapshot of data that rewrites partition 80
// with one more hash, as a writer with --keep 1 does: the files of every
// older snapshot are collected.
func commitKeepOne(t *testing.T, data string, extra byte) {
	t.Helper()
	datasettest.CommitState(t, data, schema.State{InfoHash: schema.Hash{0x80, 0xff, extra}, HashType: 1, MetadataStatus: "new", Tier: "hot"}, 1)
}

// TestExportStartsOverOnACollectedSnapshot: a commit with --keep 1 while
// export reads removes the files of its snapshot; export starts over on
// the new snapshot when nothing has reached the output yet (a file
// output is only published at the end), and otherwise says what happened.
func TestExportStartsOverOnACollectedSnapshot(t *testing.T) {
	for _, tt := range []struct {
		name    string
		file    bool   // -o FILE rather than stdout
		at      string // the partition before which the commit happens
		every   bool   // a commit before every partition read, forever
		small   bool   // a tiny sink buffer: the first partition reaches stdout at once
		wantErr string // "" for success with the new snapshot's 4 rows
	}{
		{name: "stdout, nothing written yet", at: "01"},
		{name: "stdout, first partition buffered", at: "80"},
		{name: "file output", file: true, at: "80", small: true},
		{name: "stdout, output began", at: "80", small: true,
			wantErr: "export: snapshot 1 was collected under the export by a newer commit (snapshot 2) after output began, so the output on stdout is incomplete: run it again, or have the writers keep more snapshots (--keep): "},
		{name: "collected every time", at: "01", every: true,
			wantErr: "export: 5 snapshots in a row were collected under the export by newer commits (the last 5, now 6): run it again, or have the writers keep more snapshots (--keep): "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data, _ := fixture(t)
			commits := 0
			testBeforePartition = func(key string) {
				if key == tt.at && (commits == 0 || tt.every) {
					commits++
					commitKeepOne(t, data, byte(commits))
				}
			}
			defer func() { testBeforePartition = nil }()
			if tt.small {
				defer func(n int) { sinkBuffer = n }(sinkBuffer)
				sinkBuffer = 16
			}
			var out bytes.Buffer
			o := DefaultOptions()
			o.Data, o.Table, o.Format, o.Stdout = data, "state", "csv", &out
			if tt.file {
				o.Output = filepath.Join(t.TempDir(), "state.csv")
			}
			st, err := Run(context.Background(), o)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "no such file or directory") {
					t.Fatalf("got %v\nwant %s…", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := out.Bytes()
			if tt.file {
				if got, err = os.ReadFile(o.Output); err != nil {
					t.Fatal(err)
				}
			}
			testBeforePartition = nil
			want := export(t, data, "state", "csv", nil)
			if st.Rows != 4 || !bytes.Equal(got, want) {
				t.Fatalf("%d rows:\n%s\nwant the new snapshot's 4:\n%s", st.Rows, got, want)
			}
		})
	}
}

// TestExportStartsOverOnAFIFOOpenedOnce: -o FIFO whose snapshot is
// collected before anything reached the FIFO starts over on the newer
// snapshot in the FIFO opened for the first try. It used to close the
// FIFO (its reader saw an empty stream end) and open it again (waiting
// for a second reader), once per try.
func TestExportStartsOverOnAFIFOOpenedOnce(t *testing.T) {
	data, _ := fixture(t)
	fifo := filepath.Join(t.TempDir(), "state.csv")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	read := make(chan []byte, 1)
	go func() {
		var got []byte
		if r, err := os.Open(fifo); err == nil { // waits for the writer
			got, _ = io.ReadAll(r)
			r.Close()
		}
		read <- got
	}()
	commits := 0
	testBeforePartition = func(key string) {
		if key == "80" && commits == 0 {
			commits++
			commitKeepOne(t, data, 1)
		}
	}
	defer func() { testBeforePartition = nil }()
	opens := 0
	o := DefaultOptions()
	o.Data, o.Table, o.Format, o.Output = data, "state", "csv", fifo
	o.OpenOutput = func(path string) (*fsutil.File, error) {
		if opens++; opens > 1 {
			return nil, fmt.Errorf("%s: opened %d times", path, opens)
		}
		return fsutil.CreateOutput(path)
	}
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	got := <-read
	testBeforePartition = nil
	want := export(t, data, "state", "csv", nil)
	if commits != 1 || st.Rows != 4 || !bytes.Equal(got, want) {
		t.Fatalf("%d commits; %d rows, the reader got:\n%s\nwant the new snapshot's 4:\n%s", commits, st.Rows, got, want)
	}
}
