package rowio

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// metaView renders the nullable columns of a Meta: null as "null", a
// value as itself ("" for an empty name, 0 for a size).
func metaView(m schema.Meta) string {
	ptr := func(p any) string {
		switch v := p.(type) {
		case *string:
			if v != nil {
				return fmt.Sprintf("%q", *v)
			}
		case *int64:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *int32:
			if v != nil {
				return fmt.Sprint(*v)
			}
		}
		return "null"
	}
	raw := "null"
	if m.NameRaw != nil {
		raw = fmt.Sprintf("%x", m.NameRaw)
	}
	return fmt.Sprintf("name=%s raw=%s total=%s plen=%s files=%s",
		ptr(m.Name), raw, ptr(m.TotalSize), ptr(m.PieceLength), ptr(m.FileCount))
}

// TestKnownZerosAndNullsRoundTrip: a torrent's empty name and sizes of 0
// come back as those values, and its unknown ones as null, through
// Parquet (where parquet-go read every null pointer of the embedded
// schema.Meta as a pointer to zero) and Arrow, in one batch of rows that
// mixes them.
func TestKnownZerosAndNullsRoundTrip(t *testing.T) {
	known := schema.Meta{Name: new(""), NameRaw: []byte{}, TotalSize: new(int64(0)), PieceLength: new(int64(0)),
		FileCount: new(int32(0)), Files: []schema.File{}, InfoBytes: []byte("de")}
	full := schema.Meta{Name: new("a"), NameRaw: []byte("a"), TotalSize: new(int64(7)), PieceLength: new(int64(16384)),
		FileCount: new(int32(1)), InfoBytes: []byte("d1:ai1ee")}
	unknown := schema.Meta{InfoBytes: []byte("de")}
	metas := []schema.Meta{known, unknown, full, unknown, known, unknown, unknown, known}
	for _, format := range []string{"parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			var pipe bytes.Buffer
			path := "-"
			if format == "parquet" {
				path = filepath.Join(t.TempDir(), "t.parquet")
			}
			w, err := Create[schema.Torrent](path, &pipe)
			if err != nil {
				t.Fatal(err)
			}
			in := make([]schema.Torrent, len(metas))
			for i, m := range metas {
				in[i] = schema.Torrent{InfoHash: schema.Hash{byte(i)}, HashType: schema.HashV1, FetchedAt: 1, MetadataSize: 2, Meta: m}
			}
			if err := w.Write(in); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := Open[schema.Torrent](path, &pipe)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got, err := r.ReadAll()
			if err != nil || len(got) != len(in) {
				t.Fatalf("%d rows, %v", len(got), err)
			}
			for i := range in {
				if g, w := metaView(got[i].Meta), metaView(in[i].Meta); g != w {
					t.Errorf("row %d: %s, want %s", i, g, w)
				}
			}
		})
	}
}

// resultMetaView renders a result's metadata columns that a failure
// holds as null and an ok result always sets: name_utf8_valid, private,
// files (as its length).
func resultMetaView(m schema.ResultMeta) string {
	b := func(p *bool) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	files := "null"
	if m.Files != nil {
		files = fmt.Sprintf("[%d]", len(m.Files))
	}
	return fmt.Sprintf("%s name_utf8_valid=%s private=%s file_list=%s", metaView(m.Meta()), b(m.NameUTF8Valid), b(m.Private), files)
}

// TestResultMetaNullsRoundTrip: through Parquet and Arrow, a failed
// result's metadata columns come back null (files, name_utf8_valid and
// private included: they were [], false and false), and an ok result's
// as they were: false flags and an empty file list are values.
func TestResultMetaNullsRoundTrip(t *testing.T) {
	noFiles := schema.OKMeta(schema.Meta{Name: new(""), NameRaw: []byte{}, TotalSize: new(int64(0)), FileCount: new(int32(0)),
		InfoBytes: []byte("de")})
	full := schema.OKMeta(schema.Meta{Name: new("a"), NameRaw: []byte("a"), NameUTF8Valid: true, TotalSize: new(int64(7)),
		PieceLength: new(int64(16384)), FileCount: new(int32(1)), Files: []schema.File{{Path: "a", PathRaw: []byte("a"), Length: 7}},
		Private: true, InfoBytes: []byte("d1:ai1ee")})
	var failed schema.ResultMeta
	metas := []schema.ResultMeta{failed, noFiles, failed, full, failed, failed, noFiles}
	for _, format := range []string{"parquet", "arrow"} {
		t.Run(format, func(t *testing.T) {
			var pipe bytes.Buffer
			path := "-"
			if format == "parquet" {
				path = filepath.Join(t.TempDir(), "r.parquet")
			}
			w, err := Create[schema.Result](path, &pipe)
			if err != nil {
				t.Fatal(err)
			}
			in := make([]schema.Result, len(metas))
			for i, m := range metas {
				in[i] = schema.Result{InfoHash: schema.Hash{byte(i)}, HashType: schema.HashV1, Outcome: schema.OutcomeNoPeers, ResultMeta: m}
				if m.InfoBytes != nil {
					in[i].Outcome = schema.OutcomeOK
				}
			}
			if err := w.Write(in); err != nil {
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
			if err != nil || len(got) != len(in) {
				t.Fatalf("%d rows, %v", len(got), err)
			}
			for i := range in {
				if g, w := resultMetaView(got[i].ResultMeta), resultMetaView(in[i].ResultMeta); g != w {
					t.Errorf("row %d (%s): %s, want %s", i, in[i].Outcome, g, w)
				}
			}
		})
	}
}
