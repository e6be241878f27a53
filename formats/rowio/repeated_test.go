package rowio

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenRefusesRepeatedScalar: a file whose column is a bare repeated
// leaf where the row type wants one value (fetch's results given to merge,
// a jobs file to fetch) is a wrong schema: parquet-go read each row's
// first value and dropped the others.
func TestOpenRefusesRepeatedScalar(t *testing.T) {
	type want struct {
		ID   int64    `parquet:"id"`
		Name string   `parquet:"name"`
		Tags []string `parquet:"tags,list"`
	}
	type repeatedID struct {
		ID   []int64 `parquet:"id"`
		Name string  `parquet:"name"`
	}
	type repeatedName struct {
		ID   int64    `parquet:"id"`
		Name []string `parquet:"name,optional"`
	}
	dir := t.TempDir()
	tests := []struct {
		name    string
		write   func(string) error
		wantErr string
	}{
		{"plain", func(p string) error {
			return writeRepeated(p, []want{{ID: 1, Name: "a", Tags: []string{"x", "y"}}})
		}, ""},
		{"repeated id", func(p string) error {
			return writeRepeated(p, []repeatedID{{ID: []int64{1, 2}, Name: "a"}})
		}, `column "id" is REPEATED, want one value a row`},
		{"repeated name", func(p string) error {
			return writeRepeated(p, []repeatedName{{ID: 1, Name: []string{"a", "b"}}})
		}, `column "name" is REPEATED, want one value a row`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".parquet")
			if err := tt.write(p); err != nil {
				t.Fatal(err)
			}
			r, err := Open[want](p, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				r.Close()
				return
			}
			if err == nil {
				r.Close()
				t.Fatalf("opened, want %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), p+": ") || !errors.Is(err, ErrSchema) {
				t.Fatalf("err = %q, want %s: ...%q (ErrSchema)", err, p, tt.wantErr)
			}
		})
	}
}

func writeRepeated[T any](path string, rows []T) error {
	w, err := Create[T](path, nil)
	if err != nil {
		return err
	}
	if err := w.Write(rows); err != nil {
		return err
	}
	return w.Close()
}
