package dataset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

func TestVerify(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string // in the problem; "" for none
	}{
		{"intact", func(*testing.T, string) {}, ""},
		{"one byte changed", func(t *testing.T, p string) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 1
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "CRC-32C"},
		{"truncated", func(t *testing.T, p string) {
			if err := os.Truncate(p, 10); err != nil {
				t.Fatal(err)
			}
		}, "10 bytes, the manifest says"},
		{"missing", func(t *testing.T, p string) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}, "missing"},
		// A bit of the footer: the file's CRC-32C and the footer's, which
		// readers check, both differ.
		{"a footer byte changed", func(t *testing.T, p string) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-10] ^= 0x20
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "(the content changed); footer CRC-32C "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := openNew(t)
			commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}, {InfoHash: schema.Hash{0, 2}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			m := commitRows(t, d, "01", []schema.State{{InfoHash: schema.Hash{1, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
			st := m.Table(TableState)
			victim := d.FilePath(st, "01", st.Partitions["01"][0])
			c.damage(t, victim)
			v, err := Verify(context.Background(), d.Files(m), nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := 2 + otherEmptyTables; v.Files != want {
				t.Fatalf("checked %d files, want %d", v.Files, want)
			}
			if c.want == "" {
				if len(v.Problems) != 0 {
					t.Fatalf("problems in an intact snapshot: %v", v.Problems)
				}
				return
			}
			if len(v.Problems) != 1 || v.Problems[0].Path != victim || !strings.Contains(v.Problems[0].What, c.want) {
				t.Fatalf("problems %v, want one for %s saying %q", v.Problems, victim, c.want)
			}
		})
	}
}

// TestCollected: a missing file is collection only while a newer
// snapshot is CURRENT; Missing gives Verify's missing files as such an
// error.
func TestCollected(t *testing.T) {
	d := openNew(t)
	commit := func() *Manifest {
		t.Helper()
		tx, err := d.Begin()
		if err != nil {
			t.Fatal(err)
		}
		m, err := tx.Commit(context.Background(), CommitOptions{Writer: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	old, cur := commit(), commit()
	missing := VerifyResult{Problems: []Problem{{Path: "p", What: "CRC-32C"}, {Path: "q", What: problemMissing}}}
	for _, tt := range []struct {
		name      string
		m         *Manifest
		err       error
		wantNewer int64
	}{
		{"no error", old, nil, 0},
		{"another error", old, errors.New("crc32 checksum mismatch"), 0},
		{"missing, still current", cur, fs.ErrNotExist, 0},
		{"missing, newer committed", old, fmt.Errorf("x: %w", fs.ErrNotExist), cur.Snapshot},
		{"verified missing, newer committed", old, missing.Missing(), cur.Snapshot},
		{"verified damaged only", old, VerifyResult{Problems: missing.Problems[:1]}.Missing(), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			newer, ok := d.Collected(tt.m, tt.err)
			if newer != tt.wantNewer || ok != (tt.wantNewer != 0) {
				t.Fatalf("Collected = %d, %v; want %d", newer, ok, tt.wantNewer)
			}
		})
	}
}

// TestVerifyFooterRecord: with the file intact, a footer checksum in the
// manifest that does not match (its record damaged) is a problem too:
// every reader would refuse the file.
func TestVerifyFooterRecord(t *testing.T) {
	d := openNew(t)
	m := commitRows(t, d, "01", []schema.State{{InfoHash: schema.Hash{1, 1}, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	f := &m.Table(TableState).Partitions["01"][0]
	got := f.FooterCRC32C
	f.FooterCRC32C ^= 1
	v, err := Verify(context.Background(), d.Files(m), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("footer CRC-32C %08x, the manifest says %08x", got, got^1)
	if len(v.Problems) != 1 || v.Problems[0].What != want {
		t.Fatalf("problems %v, want one: %s", v.Problems, want)
	}
}
