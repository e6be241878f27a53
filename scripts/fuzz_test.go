package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzTree writes a repository of two modules into a temporary folder,
// with fuzz.sh and lib.sh under its scripts/: the root module (ex.com/root)
// with a fuzz target in good/, tools/sub a module of its own with one
// in its root folder, and extra files (path → content) on top.
func fuzzTree(t *testing.T, extra map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                    "module ex.com/root\n\ngo 1.26\n",
		"good/good.go":              "package good\n",
		"good/good_test.go":         "package good\n\nimport \"testing\"\n\nfunc FuzzGood(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }\n",
		"tools/sub/go.mod":          "module ex.com/sub\n\ngo 1.26\n",
		"tools/sub/sub_test.go":     "package sub\n\nimport \"testing\"\n\nfunc FuzzSub(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte) {}) }\n",
		"tools/sub/other/o.go":      "package other\n",
		"tools/sub/other/o_test.go": "package other\n\nimport \"testing\"\n\nfunc TestO(t *testing.T) {}\n",
	}
	for p, s := range extra {
		files[p] = s
	}
	for _, name := range []string{"fuzz.sh", "lib.sh"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files["scripts/"+name] = string(b)
	}
	for p, s := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestFuzzScript runs fuzz.sh (one input per target) over small
// repositories: it reaches the fuzz targets of every module, a nested
// one included, and fails, naming the package, when a package's tests do
// not compile instead of skipping its targets.
func TestFuzzScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and fuzzes small modules")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	broken := map[string]string{
		"bad/bad.go":      "package bad\n",
		"bad/bad_test.go": "package bad\n\nimport \"testing\"\n\nfunc FuzzBad(f *testing.F) { undefined() }\n",
	}
	tests := []struct {
		name  string
		extra map[string]string
		args  []string
		fail  bool
		want  []string // in the output
		never []string // not in it
	}{
		{name: "every module",
			want: []string{"== ex.com/root/good FuzzGood", "== ex.com/sub FuzzSub", "every target ran for 1x: 2 passed"}},
		{name: "a package of the nested module", args: []string{"./tools/sub"},
			want:  []string{"== ex.com/sub FuzzSub", "every target ran for 1x: 1 passed"},
			never: []string{"FuzzGood"}},
		{name: "a pattern in the nested module", args: []string{"./tools/sub/..."},
			want:  []string{"== ex.com/sub FuzzSub"},
			never: []string{"FuzzGood"}},
		{name: "tests that do not compile", extra: broken, fail: true,
			want:  []string{"undefined: undefined", "cannot list the tests of ex.com/root/bad"},
			never: []string{"every target ran"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fuzzTree(t, tt.extra)
			cmd := exec.Command(bash, append([]string{filepath.Join(root, "scripts", "fuzz.sh")}, tt.args...)...)
			cmd.Env = append(os.Environ(), "GO="+gobin, "FUZZTIME=1x", "FUZZMINIMIZE=1x", "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=")
			out, err := cmd.CombinedOutput()
			if tt.fail != (err != nil) {
				t.Fatalf("err = %v, want failure %v:\n%s", err, tt.fail, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tt.never {
				if strings.Contains(string(out), n) {
					t.Errorf("output has %q:\n%s", n, out)
				}
			}
		})
	}
}
