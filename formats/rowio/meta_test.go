package rowio

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

func TestMetadataRoundTrip(t *testing.T) {
	big := strings.Repeat("[2001:db8::1]:65535 1767225600000\n", 80_000) // near MaxAvoidBytes
	for _, name := range []string{"parquet", "arrow", "arrow without rows"} {
		t.Run(name, func(t *testing.T) {
			var pipe bytes.Buffer
			path := "-"
			if name == "parquet" {
				path = filepath.Join(t.TempDir(), "r.parquet")
			}
			w, err := Create[schema.Result](path, &pipe)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.SetMetadata("k", "v1"); err != nil {
				t.Fatal(err)
			}
			if err := w.SetMetadata("k", "v2"); err != nil { // the last value counts
				t.Fatal(err)
			}
			if err := w.SetMetadata("big", big); err != nil {
				t.Fatal(err)
			}
			if name != "arrow without rows" {
				if err := w.Write(sampleResults()); err != nil {
					t.Fatal(err)
				}
				if name == "arrow" {
					if err := w.SetMetadata("late", "x"); err == nil {
						t.Errorf("metadata after the first rows of an Arrow stream was accepted")
					}
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := Open[schema.Result](path, &pipe)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if v, ok := r.Metadata("k"); !ok || v != "v2" {
				t.Errorf("k = %q, %v; want v2", v, ok)
			}
			if v, _ := r.Metadata("big"); v != big {
				t.Errorf("a %d-byte value came back as %d bytes", len(big), len(v))
			}
			if _, ok := r.Metadata("absent"); ok {
				t.Errorf("an absent key was found")
			}
			rows, err := r.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 0, false: 2}[name == "arrow without rows"]; len(rows) != want {
				t.Errorf("%d rows, want %d", len(rows), want)
			}
		})
	}
}
