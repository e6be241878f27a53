package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyNullRefused: a JSON null in a hand-edited policy.json is no
// value, nor is a key given twice one: policy show and policy set refuse
// the file (exit 2) with one line naming the field, and leave it as it
// was. A null used to read as
// the default (jitter, the whole file) or as an empty list (a backoff
// schedule: "can repair it", yet policy set said "cannot be set from the
// command line"; reactivation.classes: no reactivation, shown as null).
func TestPolicyNullRefused(t *testing.T) {
	data := filepath.Join(t.TempDir(), "ds")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(data, "policy.json")
	tests := []struct {
		name   string
		before string // policy.json
		args   []string
		stderr string
	}{
		{"show, a null list", `{"reactivation": {"classes": null}}`, []string{"show"},
			"reactivation.classes: null is no value: give one, or leave the field out for its default"},
		{"show, a null number", `{"jitter": null}`, []string{"show"}, "policy.json: jitter: null is no value"},
		{"show, a null file", `null`, []string{"show"}, "policy.json: policy: want an object, got null"},
		{"show, a null list item", `{"bad_metadata": {"long": ["7d", null]}}`, []string{"show"}, "bad_metadata.long[1]: null is no value"},
		{"set, a null schedule", `{"backoff": {"no_peers": null}}`, []string{"set", "backoff.no_peers=30m,2h"},
			"policy set: policy: " + file + ": backoff.no_peers: null is no value"},
		{"set, a null object", `{"plan": null}`, []string{"set", "plan.lease=1h"}, "policy.json: plan: null is no value"},
		{"show, a key twice", `{"jitter": 0.1, "jitter": 0.3}`, []string{"show"}, "policy.json: jitter: given twice: keep one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(file, []byte(tt.before), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"policy", tt.args[0], "--data", data}, tt.args[1:]...)
			_, stderr, code := runMain(t, args...)
			if code != 2 || !strings.Contains(stderr, tt.stderr) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, tt.stderr)
			}
			if b, err := os.ReadFile(file); err != nil || string(b) != tt.before {
				t.Errorf("policy.json is %q (%v), want it left as %q", b, err, tt.before)
			}
		})
	}
}
