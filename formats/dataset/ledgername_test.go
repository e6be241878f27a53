package dataset

import (
	"path/filepath"
	"testing"
)

// TestAbsName: each path a name holds is made absolute, in order, and
// nothing else changes: an absolute path, a word that is no path ("stdin"),
// a path the name does not hold.
func TestAbsName(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	for _, tt := range []struct {
		name, in string
		paths    []string
		want     string
	}{
		{"a file", "h.txt", []string{"h.txt"}, filepath.Join(wd, "h.txt")},
		{"up a folder", "../x/h.txt", []string{"../x/h.txt"}, filepath.Join(filepath.Dir(wd), "x", "h.txt")},
		{"spaces and unicode", "d ø/h 1.txt", []string{"d ø/h 1.txt"}, filepath.Join(wd, "d ø", "h 1.txt")},
		{"absolute already", "/srv/h.txt", []string{"/srv/h.txt"}, "/srv/h.txt"},
		{"in words", "leftover ds/inbox/part-1.spool", []string{"ds/inbox/part-1.spool"},
			"leftover " + filepath.Join(wd, "ds", "inbox", "part-1.spool")},
		{"a pipe and its spool", "q (q/inbox/part-1.spool)", []string{"q", "q/inbox/part-1.spool"},
			filepath.Join(wd, "q") + " (" + filepath.Join(wd, "q", "inbox", "part-1.spool") + ")"},
		{"a word, no path", "stdin", []string{"", "ds/inbox/part-1.results"}, "stdin"},
		{"nothing to make absolute", "stdin", nil, "stdin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := AbsName(tt.in, tt.paths...); got != tt.want {
				t.Errorf("AbsName(%q, %q) = %q, want %q", tt.in, tt.paths, got, tt.want)
			}
		})
	}
}
