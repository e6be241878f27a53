package infodict

import (
	"strings"
	"testing"
)

// TestPadFiles: BEP 47 pad files (a "files" entry whose attr string
// holds "p") are no files of the torrent's: Parse leaves them out of
// files, file_count and total_size, and ParseWithPads, what Parse gave
// before, counts them. Other attributes, and an attr that is no string,
// mark nothing; a pad file is still checked as a file.
func TestPadFiles(t *testing.T) {
	const tail = "e4:name1:d12:piece lengthi16384ee"
	file := func(length, path, attr string) string {
		if attr != "" {
			attr = "4:attr" + attr
		}
		return "d" + attr + "6:lengthi" + length + "e4:pathl" + path + "ee"
	}
	dict := func(files ...string) string { return "d5:filesl" + strings.Join(files, "") + tail }
	a, b := file("100", "1:a", ""), file("200", "1:b", "")
	for _, tt := range []struct {
		name              string
		info              string
		files             int32 // Parse's file_count
		size              int64 // Parse's total_size
		withPads          int32 // ParseWithPads' file_count
		withPadsSize      int64
		wantErr           bool
		firstPath, lastIn string // Parse's first file's path; "" for none
	}{
		{"no pads", dict(a, b), 2, 300, 2, 300, false, "a", "b"},
		{"a pad between", dict(a, file("16284", "4:.pad5:16284", "1:p"), b), 2, 300, 3, 16584, false, "a", "b"},
		{"pad with other attributes", dict(a, file("16284", "24:_____padding_file_0_____", "2:hp"), b), 2, 300, 3, 16584, false, "a", "b"},
		{"executable, not a pad", dict(a, file("5", "1:x", "1:x"), b), 3, 305, 3, 305, false, "a", "b"},
		{"attr no string", dict(a, file("5", "1:x", "i1e"), b), 3, 305, 3, 305, false, "a", "b"},
		{"only pads", dict(file("7", "1:p", "1:p")), 0, 0, 1, 7, false, "", ""},
		{"a pad with a negative length", dict(a, file("-1", "1:p", "1:p")), 0, 0, 0, 0, true, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.info))
			old, oldErr := ParseWithPads([]byte(tt.info))
			if (err != nil) != tt.wantErr || (oldErr != nil) != tt.wantErr {
				t.Fatalf("Parse: %v, ParseWithPads: %v; want errors: %v", err, oldErr, tt.wantErr)
			}
			if err != nil {
				return
			}
			if *m.FileCount != tt.files || int(*m.FileCount) != len(m.Files) || *m.TotalSize != tt.size {
				t.Errorf("Parse: %d files (%d listed), %d bytes; want %d, %d", *m.FileCount, len(m.Files), *m.TotalSize, tt.files, tt.size)
			}
			if *old.FileCount != tt.withPads || *old.TotalSize != tt.withPadsSize {
				t.Errorf("ParseWithPads: %d files, %d bytes; want %d, %d", *old.FileCount, *old.TotalSize, tt.withPads, tt.withPadsSize)
			}
			if len(m.Files) > 0 && (m.Files[0].Path != tt.firstPath || m.Files[len(m.Files)-1].Path != tt.lastIn) {
				t.Errorf("files %+v, want %s first and %s last", m.Files, tt.firstPath, tt.lastIn)
			}
			if m.Files == nil || len(m.InfoBytes) != len(tt.info) {
				t.Errorf("files %v (want a list, maybe empty), %d info bytes (want all %d)", m.Files, len(m.InfoBytes), len(tt.info))
			}
		})
	}
}
