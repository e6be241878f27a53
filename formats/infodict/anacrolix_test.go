package infodict

import (
	"testing"

	"github.com/anacrolix/torrent/bencode"
	"github.com/anacrolix/torrent/metainfo"

	"github.com/infohash/infohash/formats/schema"
)

// checkAnacrolix fails t when anacrolix's metainfo.Info, decoding an
// accepted plain v1 dictionary b (raw its keys, m what Parse made of it),
// reads other sizes or flags than Parse: the piece length, the name's
// bytes, each file's length, the total size and, when "private" is an
// integer, the private flag (libtorrent's rule, any integer but 0, which
// anacrolix's bool follows). Left out are what anacrolix has no rules for
// (BEP 47 attributes, a file tree, meta version) and a dictionary with
// both "length" and "files" or an empty "files" (anacrolix reads
// "length" then, 0 when absent: one file where Parse lists none).
func checkAnacrolix(t *testing.T, b []byte, raw *rawInfo, m *schema.Meta) {
	t.Helper()
	if raw.FileTree != nil || raw.MetaVersion != nil || raw.Attr != nil || (raw.Files != nil) == (raw.Length != nil) ||
		(raw.Files != nil && len(raw.Files) == 0) {
		return
	}
	for i := range raw.Files {
		if raw.Files[i].Attr != nil {
			return
		}
	}
	var info metainfo.Info
	if err := bencode.Unmarshal(b, &info); err != nil {
		return // unsorted keys, a field of another type: anacrolix refuses more
	}
	if m.PieceLength != nil && *m.PieceLength != info.PieceLength {
		t.Fatalf("piece length %d, anacrolix %d, in %q", *m.PieceLength, info.PieceLength, b)
	}
	if raw.Name != nil && string(m.NameRaw) != info.Name {
		t.Fatalf("name_raw %q, anacrolix %q, in %q", m.NameRaw, info.Name, b)
	}
	files := info.UpvertedFiles()
	if len(m.Files) != len(files) || *m.FileCount != int32(len(files)) || *m.TotalSize != info.TotalLength() {
		t.Fatalf("%d files of %d bytes, anacrolix %d of %d, in %q", len(m.Files), *m.TotalSize, len(files), info.TotalLength(), b)
	}
	for i := range files {
		if m.Files[i].Length != files[i].Length {
			t.Fatalf("file %d of %d bytes, anacrolix %d, in %q", i, m.Files[i].Length, files[i].Length, b)
		}
	}
	if len(raw.Private) > 0 && raw.Private[0] == 'i' && info.Private != nil && m.Private != *info.Private {
		t.Fatalf("private %v, anacrolix %v, for %q in %q", m.Private, *info.Private, raw.Private, b)
	}
}
