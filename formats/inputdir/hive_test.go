package inputdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHiveErrorResolved: HiveError reads the folders of the file's
// absolute path, so that a file named from inside its partition folder
// (cd out/lease_id=X && merge data_0.parquet), or through a symbolic
// link to that folder or to the file, is caught as the file named from
// above is; a link named after a partition counts as a folder so named.
// It read the path as given: a bare data_0.parquet has no folder. A file
// that holds the column, or one under no partition folder, is no error
// however it is named.
func TestHiveErrorResolved(t *testing.T) {
	d := t.TempDir()
	for _, f := range []string{"out/lease_id=X/data_0.parquet", "plain/data_0.parquet"} {
		p := filepath.Join(d, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{"latest": "out/lease_id=X", "lease_id=Y": "plain",
		"file.parquet": "out/lease_id=X/data_0.parquet"} {
		if err := os.Symlink(to, filepath.Join(d, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name, cwd, path string
		has             bool   // the file holds lease_id
		want            string // the folder the error names; "" for none
	}{
		{"named from above", "", "out/lease_id=X/data_0.parquet", false, "lease_id=X"},
		{"named from inside", "out/lease_id=X", "data_0.parquet", false, "lease_id=X"},
		{"./ from inside", "out/lease_id=X", "./data_0.parquet", false, "lease_id=X"},
		{"from a subfolder, ../", "out/lease_id=X", "../lease_id=X/data_0.parquet", false, "lease_id=X"},
		{"through a link to the folder", "", "latest/data_0.parquet", false, "lease_id=X"},
		{"from inside a link to the folder", "latest", "data_0.parquet", false, "lease_id=X"},
		{"a link to the file", "", "file.parquet", false, "lease_id=X"},
		{"a link named as a partition", "", "lease_id=Y/data_0.parquet", false, "lease_id=Y"},
		{"from inside a link named as a partition", "lease_id=Y", "data_0.parquet", false, "lease_id=Y"},
		{"the file holds the column", "out/lease_id=X", "data_0.parquet", true, ""},
		{"no partition folder", "plain", "data_0.parquet", false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(filepath.Join(d, tt.cwd))
			err := HiveError("cmd", tt.path, []string{"lease_id", "outcome"}, func(c string) bool { return tt.has && c == "lease_id" })
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want none", err)
				}
				return
			}
			want := `column "lease_id" is not in the file but in the name of its folder "` + tt.want + `" (Hive partitioning), which cmd does not read`
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("got %v\nwant %q...", err, want)
			}
		})
	}
}
