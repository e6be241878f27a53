package dataset_test

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// everyTableDataset makes a dataset of one commit with a file in the
// state, torrents, leases and peers tables, and returns it open with that
// commit's manifest.
func everyTableDataset(t *testing.T) (*dataset.Dataset, *dataset.Manifest) {
	t.Helper()
	d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	h := schema.Hash{0x42, 1}
	for _, w := range []struct {
		table, key string
		write      func() (dataset.FileInfo, error)
	}{
		{dataset.TableState, "42", func() (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TableState, "42", []schema.State{{InfoHash: h, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
		}},
		{dataset.TableTorrents, "42", func() (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TableTorrents, "42", []schema.Torrent{{InfoHash: h, HashType: 1,
				Meta: schema.Meta{Name: new("x"), InfoBytes: []byte("d1:xi0ee")}}})
		}},
		{dataset.TableLeases, "", func() (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TableLeases, "", []schema.Lease{{InfoHash: h, LeaseID: "L", LeaseUntil: 5, Reason: "new", PlannedAt: 1}})
		}},
		{dataset.TablePeers, "", func() (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TablePeers, "", []schema.PeerPenalty{{Addr: "127.0.0.1:1", Class: "rejected", Until: 5}})
		}},
	} {
		fi, err := w.write()
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(w.table, w.key, []dataset.FileInfo{fi})
	}
	m, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return d, m
}

// TestDataFileCarriesTheManifestsRecord: the rowio.DataFile of a file
// of the state, torrents, leases or peers table carries the footer
// checksum the manifest records of it, so that a reader that opens the
// file through it refuses a footer that no longer matches (a
// *rowio.FooterError naming the file); only the state files of formats 1
// and 2 may lack columns.
func TestDataFileCarriesTheManifestsRecord(t *testing.T) {
	d, m := everyTableDataset(t)
	for _, tt := range []struct{ table, key string }{
		{dataset.TableState, "42"},
		{dataset.TableTorrents, "42"},
		{dataset.TableLeases, ""},
		{dataset.TablePeers, ""},
	} {
		t.Run(tt.table, func(t *testing.T) {
			tb := m.Table(tt.table)
			f := tb.Partitions[tt.key][0]
			df := d.DataFile(m, tt.table, tt.key, f)
			path := d.FilePath(tb, tt.key, f)
			if df.Path() != path || df.Footer() != f.Footer() || !df.Footer().Recorded() || df.Lacks() != nil {
				t.Fatalf("DataFile: %q %+v lacking %q, want %q %+v (recorded) lacking none",
					df.Path(), df.Footer(), df.Lacks(), path, f.Footer())
			}
			fh, _, _, err := df.Open()
			if err != nil {
				t.Fatalf("opening the intact file: %v", err)
			}
			fh.Close()
			flipFooterByte(t, path)
			_, _, _, err = df.Open()
			if fe, ok := errors.AsType[*rowio.FooterError](err); !ok || fe.Path != path {
				t.Fatalf("opening the damaged file: %v, want a FooterError naming %s", err, path)
			}
		})
	}
	for _, tt := range []struct {
		version int
		lacks   []string
	}{
		{1, []string{"backoff_step", "bad_metadata", "reactivated_at", "avoid_peers", "peers", "first_source", "last_failure_at", "peers_at", "info_hash_v2_source"}},
		{2, []string{"avoid_peers", "peers", "first_source", "last_failure_at", "peers_at", "info_hash_v2_source"}},
		{3, []string{"peers", "first_source", "last_failure_at", "peers_at", "info_hash_v2_source"}},
		{5, []string{"peers", "first_source", "last_failure_at", "peers_at", "info_hash_v2_source"}},
		{8, []string{"first_source", "last_failure_at", "peers_at", "info_hash_v2_source"}},
		{11, []string{"peers_at", "info_hash_v2_source"}},
		{dataset.FormatVersion, nil},
	} {
		old := *m
		old.FormatVersion = tt.version
		st := old.Table(dataset.TableState)
		if got := d.DataFile(&old, dataset.TableState, "42", st.Partitions["42"][0]).Lacks(); !slices.Equal(got, tt.lacks) {
			t.Errorf("format %d: a state file lacks %q, want %q", tt.version, got, tt.lacks)
		}
		tr := old.Table(dataset.TableTorrents)
		if got := d.DataFile(&old, dataset.TableTorrents, "42", tr.Partitions["42"][0]).Lacks(); got != nil {
			t.Errorf("format %d: a torrents file lacks %q, want none", tt.version, got)
		}
	}
}

// flipFooterByte flips a bit of the byte just before the footer's
// length in the Parquet file at path: the footer's last byte.
func flipFooterByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-9] ^= 0x01
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDataFilesAreBuiltInOnePlace: outside tests, a rowio.DataFile with
// a footer checksum is built only by Dataset.DataFile (dataFile), and an
// unrecorded one only by ReadFile, for files that are no snapshot's: a
// reader of a snapshot that built its own could leave the checksum out
// (UnrecordedFile of a snapshot's path) or take it from another
// manifest. A new caller of either belongs in this list only if it reads
// no snapshot's file, or builds the value from a manifest entry as
// dataFile does.
func TestDataFilesAreBuiltInOnePlace(t *testing.T) {
	allowed := map[string][]string{
		"RecordedFile":   {"formats/dataset/datafile.go"},
		"UnrecordedFile": {"formats/dataset/rows.go"},
	}
	root := filepath.Join("..", "..") // the module's
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(p, "go.mod")); (err == nil && p != root) || e.Name() == "testdata" {
				return filepath.SkipDir // another module (tools/duckcheck), or no code
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, "formats/rowio/") {
			return nil // rowio defines them
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			s, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := s.X.(*ast.Ident); ok && x.Name == "rowio" {
				if where, ok := allowed[s.Sel.Name]; ok && !slices.Contains(where, rel) {
					t.Errorf("%s: rowio.%s outside %s: get a snapshot's file from Dataset.DataFile",
						fset.Position(s.Pos()), s.Sel.Name, strings.Join(where, ", "))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
