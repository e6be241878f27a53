package schedule

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadPolicyLink: DIR/policy.json may be a symbolic link ("policy set"
// writes through it), but one to nothing (the shared file moved away) is
// an error naming it: it read as no policy file, and every stage, and
// "policy show", ran on the defaults unsaid. A link to a file is read, and
// no file at all is the Default policy.
func TestLoadPolicyLink(t *testing.T) {
	tests := []struct {
		name   string
		target string // the link's target file's content; "-": no link, no file; "": a link to nothing
		want   string // in Load's error; "": none
		jitter float64
	}{
		{"no file", "-", "", Default().Jitter},
		{"a link to a file", `{"jitter": 0.1}`, "", 0.1},
		{"a link to nothing", "", "policy: DIR/policy.json is a symbolic link to ", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.target != "-" {
				target := filepath.Join(t.TempDir(), "shared.json")
				if tt.target != "" {
					if err := os.WriteFile(target, []byte(tt.target), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.Symlink(target, Path(dir)); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Load(dir)
			msg := ""
			if err != nil {
				msg = strings.ReplaceAll(err.Error(), dir, "DIR")
			}
			switch {
			case tt.want == "" && (err != nil || p.Jitter != tt.jitter):
				t.Fatalf("jitter %v, error %v; want %v, none", p.Jitter, err, tt.jitter)
			case tt.want != "" && !strings.Contains(msg, tt.want):
				t.Fatalf("error %q, want one with %q", msg, tt.want)
			}
		})
	}
}
