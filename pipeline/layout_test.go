package pipeline

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnePackagePerStage: every Go package below pipeline/ is a stage,
// pipeline/NAME, and none is a command. A codec two stages share, or a
// generator for benchmarks, belongs under formats/, internal/ or tools/.
func TestOnePackagePerStage(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.Dir(path)
		if dir == "." || !strings.HasSuffix(path, ".go") {
			return nil
		}
		if strings.Contains(dir, string(filepath.Separator)) {
			t.Errorf("pipeline/%s: a package nested in a stage's folder (move it under formats/, internal/ or tools/)", filepath.ToSlash(dir))
			return filepath.SkipDir
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			t.Errorf("pipeline/%s: a command among the stages (move it under tools/ or cmd/)", filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("capture"); err != nil {
		t.Fatalf("not run from pipeline/: %v", err)
	}
}

// TestNoStageImportsAnother: a stage's code imports no other stage, but
// schedule, the retry policy the scheduling stages share. What two stages
// both need (a table such as the leases) sits under formats/.
func TestNoStageImportsAnother(t *testing.T) {
	const prefix = "github.com/infohash/infohash/pipeline/"
	files, err := filepath.Glob("*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no stage files found: not run from pipeline/")
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		stage := filepath.Dir(path)
		for _, imp := range f.Imports {
			other, ok := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), prefix)
			if ok && other != stage && other != "schedule" {
				t.Errorf("pipeline/%s imports stage %s (move what they share under formats/)", filepath.ToSlash(path), other)
			}
		}
	}
}
