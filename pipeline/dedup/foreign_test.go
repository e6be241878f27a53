package dedup

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// foreignInbox puts into the folder inbox what no run wrote there: the
// files of a dataset an older version made in it (--data DIR/inbox),
// which runs took for leftovers, set aside as bad input and failed on,
// one a run, and a file a person put there. It returns the entries and
// their contents ("/" for a folder).
func foreignInbox(t *testing.T, inbox string) map[string]string {
	t.Helper()
	foreign := map[string]string{
		"CURRENT": "000000000001.json\n", "LOCK": "", "policy.json": "{}\n", "input-cache": "x",
		"manifests": "/", "state": "/", "notes.txt": "0123456789abcdef0123456789abcdef01234567\n",
		"part-x.spool.keep": "0123456789abcdef0123456789abcdef01234567\n",
	}
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range foreign {
		var err error
		if content == "/" {
			err = os.Mkdir(filepath.Join(inbox, name), 0o755)
		} else {
			err = os.WriteFile(filepath.Join(inbox, name), []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return foreign
}

// checkForeign fails unless inbox holds exactly the foreign entries, as
// they were.
func checkForeign(t *testing.T, inbox string, foreign map[string]string) {
	t.Helper()
	ents, err := os.ReadDir(inbox)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	for name, content := range foreign {
		want = append(want, name)
		if content == "/" {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(inbox, name)); err != nil || string(b) != content {
			t.Errorf("%s holds %q (%v), want %q as it was", name, b, err, content)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the inbox holds %q, want %q", got, want)
	}
}

// TestInboxTakesOnlySpools: a run takes from DIR/inbox/ only the whole
// spools runs wrote there (part-*.spool), applies them and removes them;
// every other entry is left alone as it is: a run with those alone and
// no input has nothing to apply (it failed on CURRENT as bad input, then
// on the next file, one a run), and one with an input applies it.
func TestInboxTakesOnlySpools(t *testing.T) {
	obs := genObs(7, 50, 10)
	spooled := "fedcba9876543210fedcba9876543210fedcba98\n"
	for _, tc := range []struct {
		name   string
		spool  bool // a dead run's whole spool in the inbox too
		inputs bool
	}{
		{"only foreign, no input", false, false},
		{"only foreign, an input", false, true},
		{"a spool and foreign", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "ds")
			if _, err := run(t, data, nil, writeObs(t, dir, obs[:10])); err != nil {
				t.Fatal(err)
			}
			inbox := filepath.Join(data, "inbox")
			foreign := foreignInbox(t, inbox)
			spool := filepath.Join(inbox, "part-0123456789abcdef.spool")
			if tc.spool {
				if err := os.WriteFile(spool, []byte(spooled), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var inputs []string
			if tc.inputs {
				inputs = []string{writeObs(t, dir, obs)}
			}
			for range 2 { // the second run as the first: nothing set aside meanwhile
				_, err := run(t, data, nil, inputs...)
				if !tc.inputs {
					if !errors.Is(err, errNoInput) {
						t.Fatalf("err %v; want %v", err, errNoInput)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				checkForeign(t, inbox, foreign)
			}
			got := readState(t, data)
			want := truth(obs[:10])
			if tc.inputs {
				want = truth(obs)
			}
			h, _, _, err := schema.ParseHex(strings.TrimSpace(spooled))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := got[h]; ok != tc.spool {
				t.Fatalf("the spool's hash in the state: %v, want %v", ok, tc.spool)
			}
			if len(got) != len(want)+map[bool]int{true: 1}[tc.spool] {
				t.Fatalf("state holds %d hashes, want %d", len(got), len(want))
			}
		})
	}
}
