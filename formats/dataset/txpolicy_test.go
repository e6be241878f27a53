package dataset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// setPolicyFile writes DIR/policy.json under the writer lock, as "policy
// set" does ("": removes it).
func setPolicyFile(t *testing.T, d *Dataset, text string) {
	t.Helper()
	l, err := LockWriter(context.Background(), d.Dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	p := filepath.Join(d.Dir, policyFile)
	if text == "" {
		os.Remove(p)
		return
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// policyTry is one try of a writer that records the policy its
// transaction began with (if record), while between its Begin and its
// Commit the policy file becomes during ("-": left alone).
func policyTry(t *testing.T, d *Dataset, record bool, during string) (*Manifest, error) {
	t.Helper()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	_, raw, err := tx.PolicyFile()
	if err != nil {
		t.Fatal(err)
	}
	if during != "-" {
		setPolicyFile(t, d, during)
	}
	info, err := WriteStaged(tx, TableState, "00", []schema.State{{HashType: 1, MetadataStatus: "new", Tier: "hot"}})
	if err != nil {
		t.Fatal(err)
	}
	tx.SetPartition(TableState, "00", []FileInfo{info})
	if record {
		tx.SetPolicy(raw)
	}
	return tx.Commit(context.Background(), CommitOptions{Writer: "test"})
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return out.String()
}

// TestCommitRefusesReplacedPolicy: a transaction that records the policy
// it began with does not publish it once "policy set" replaced the
// policy file (a conflict); re-applied, it records the new one. One that
// records none is not concerned.
func TestCommitRefusesReplacedPolicy(t *testing.T) {
	const (
		oldP = `{"version":1,"jitter":0.1}`
		newP = `{"version":1,"jitter":0.2}`
	)
	tests := []struct {
		name     string
		before   string // policy file at Begin ("": none)
		during   string // what it becomes before Commit ("-": unchanged; "": removed)
		record   bool
		conflict bool
	}{
		{"replaced", oldP, newP, true, true},
		{"unchanged", oldP, "-", true, false},
		{"rewritten the same", oldP, oldP, true, false},
		{"created", "", newP, true, true},
		{"removed", oldP, "", true, true},
		{"replaced, policy not recorded", oldP, newP, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := openNew(t)
			setPolicyFile(t, d, tt.before)
			m, err := policyTry(t, d, tt.record, tt.during)
			if !tt.conflict {
				if err != nil {
					t.Fatalf("commit: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrConflict) || m != nil {
				t.Fatalf("commit = %v, %v; want a conflict", m, err)
			}
			if cur, err := d.Current(); err != nil || cur.Snapshot != 0 {
				t.Fatalf("a snapshot was published: %v, %v", cur, err)
			}
			// Re-applied: the try reads the policy in force, and records it.
			m, err = policyTry(t, d, true, "-")
			if err != nil {
				t.Fatalf("re-applied: %v", err)
			}
			if tt.during == "" {
				if m.Policy != nil {
					t.Fatalf("snapshot records policy %s, want none", m.Policy)
				}
				return
			}
			if got := compact(t, m.Policy); got != tt.during {
				t.Fatalf("snapshot records policy %s, want %s", got, tt.during)
			}
		})
	}
}
