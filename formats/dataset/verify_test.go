package dataset

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

func TestVerify(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string // in the problem; "" for none
	}{
		{"intact", func(*testing.T, string) {}, ""},
		{"one byte changed", func(t *testing.T, p string) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 1
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "CRC-32C"},
		{"truncated", func(t *testing.T, p string) {
			if err := os.Truncate(p, 10); err != nil {
				t.Fatal(err)
			}
		}, "10 bytes, the manifest says"},
		{"missing", func(t *testing.T, p string) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}, "missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := openNew(t)
			commitRows(t, d, "00", []schema.State{{InfoHash: schema.Hash{0, 1}}, {InfoHash: schema.Hash{0, 2}}})
			m := commitRows(t, d, "01", []schema.State{{InfoHash: schema.Hash{1, 1}}})
			st := m.Table(TableState)
			victim := d.FilePath(st, "01", st.Partitions["01"][0])
			c.damage(t, victim)
			v, err := Verify(context.Background(), d.Files(m), nil)
			if err != nil {
				t.Fatal(err)
			}
			if v.Files != 2 {
				t.Fatalf("checked %d files, want 2", v.Files)
			}
			if c.want == "" {
				if len(v.Problems) != 0 {
					t.Fatalf("problems in an intact snapshot: %v", v.Problems)
				}
				return
			}
			if len(v.Problems) != 1 || v.Problems[0].Path != victim || !strings.Contains(v.Problems[0].What, c.want) {
				t.Fatalf("problems %v, want one for %s saying %q", v.Problems, victim, c.want)
			}
		})
	}
}
