package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagValuesChecked runs commands with bad flag values on an empty
// directory: each must fail with exit 2 and one line naming the flag,
// before it reads an input or creates the dataset.
func TestFlagValuesChecked(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	hashes := filepath.Join(dir, "h.txt")
	if err := os.WriteFile(hashes, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir() // what must not be in dir
	dangling := filepath.Join(elsewhere, "link")
	if err := os.Symlink(filepath.Join(elsewhere, "gone"), dangling); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(dir, "typo", "state")
	nl := filepath.Join(dir, "no\nsuch") // printed as no\nsuch: one line
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"negative half-life", []string{"dedup", "--data", data, "--half-life", "-1h", hashes}, "dedup: --half-life: -1h is not positive"},
		{"bad half-life", []string{"dedup", "--data", data, "--half-life", "1x", hashes}, `dedup: --half-life: "1x": want a duration such as 90m, 2h or 1d`},
		{"zero lease", []string{"plan-retries", "--data", data, "-o", "-", "--lease", "0"}, "plan-retries: --lease: 0s is not positive"},
		{"lease over a week", []string{"plan-retries", "--data", data, "-o", "-", "--lease", "5000w"}, "plan-retries: --lease: 35000d is longer than 7d"},
		// lease_until is kept in milliseconds: a shorter lease ended as
		// it was planned, and a second plan at the same time leased the
		// same hashes again.
		{"lease under a millisecond", []string{"plan-retries", "--data", data, "-o", "-", "--lease", "999us"}, "plan-retries: --lease: 999us is shorter than 1ms"},
		{"bad lease", []string{"plan-retries", "--data", data, "-o", "-", "--lease", "soon"}, `plan-retries: --lease: "soon": want a duration such as 90m, 2h or 1d`},
		{"bad lock-wait after positional", []string{"merge", "--data", data, hashes, "--lock-wait", "1d2"}, `merge: --lock-wait: "1d2": want a duration`},
		{"zero half-life", []string{"dedup", "--data", data, "--half-life", "0", hashes}, "dedup: --half-life: 0s is not positive"},
		{"dedup keep 0", []string{"dedup", "--data", data, "--keep", "0", hashes}, "dedup: --keep: 0 is less than 1"},
		{"merge keep -1", []string{"merge", "--data", data, "--keep", "-1", hashes}, "merge: --keep: -1 is less than 1"},
		{"plan keep 0", []string{"plan-retries", "--data", data, "-o", "-", "--keep", "0"}, "plan-retries: --keep: 0 is less than 1"},
		{"dedup lock-wait", []string{"dedup", "--data", data, "--lock-wait", "-1s", hashes}, "dedup: --lock-wait: -1s is negative"},
		{"merge lock-wait", []string{"merge", "--data", data, "--lock-wait", "-5m", hashes}, "merge: --lock-wait: -5m is negative"},
		{"plan lock-wait", []string{"plan-retries", "--data", data, "-o", "-", "--lock-wait=-1s"}, "plan-retries: --lock-wait: -1s is negative"},
		// plan-retries commits leases: its jobs go only where -o says
		// (a default of stdout put Arrow into "plan-retries >>cron.log"
		// and left the hashes leased).
		{"plan no output", []string{"plan-retries", "--data", data}, `plan-retries: -o is required`},
		// A wrong value comes before a missing -o: --limit -1 said "-o is
		// required", then, once given -o, that the limit was negative.
		{"plan limit negative", []string{"plan-retries", "--data", data, "-o", "-", "--limit", "-1"}, "plan-retries: --limit: -1 is negative"},
		{"plan limit negative, no output", []string{"plan-retries", "--data", data, "--limit", "-1"}, "plan-retries: --limit: -1 is negative"},
		{"plan lease 0, no output", []string{"plan-retries", "--data", data, "--lease", "0"}, "plan-retries: --lease: 0s is not positive"},
		{"plan new-share, no output", []string{"plan-retries", "--new-share", "2", "--data", data}, "plan-retries: --new-share: 2 is outside [0, 1]"},
		{"capture node-ids, no output", []string{"capture", "--bootstrap", "", "--node-ids", "0"}, "capture: --node-ids: 0 is outside 1-256"},
		{"capture no output", []string{"capture", "--bootstrap", ""}, `capture: -o is required`},
		{"fetch no output", []string{"fetch", "--no-dht", hashes}, `fetch: -o is required`},
		{"peer port too big", []string{"fetch", "--peer", "127.0.0.1:99999", hashes, "-o", filepath.Join(dir, "r.parquet")}, `fetch: --peer: "127.0.0.1:99999": port 99999 is outside 1-65535`},
		{"peer port 0", []string{"fetch", "--peer", "127.0.0.1:6881", "--peer", "127.0.0.1:0", hashes, "-o", filepath.Join(dir, "r.parquet")}, `fetch: --peer: "127.0.0.1:0": port 0 is outside`},
		{"peer no port", []string{"fetch", "--peer", "127.0.0.1", hashes, "-o", filepath.Join(dir, "r.parquet")}, `fetch: --peer: "127.0.0.1": missing port: want HOST:PORT`},
		{"peer named port", []string{"fetch", "--peer", "127.0.0.1:http", hashes, "-o", filepath.Join(dir, "r.parquet")}, `port "http" is not a number`},
		{"peer no host", []string{"fetch", "--peer", ":6881", hashes, "-o", filepath.Join(dir, "r.parquet")}, `fetch: --peer: ":6881": no host`},
		{"peer with a space", []string{"fetch", "--peer", "my host:6881", hashes, "-o", filepath.Join(dir, "r.parquet")}, `fetch: --peer: "my host:6881": not an endpoint merge accepts`},
		{"peer not UTF-8", []string{"fetch", "--peer", "bad\xffhost:6881", hashes, "-o", filepath.Join(dir, "r.parquet")}, `fetch: --peer: "bad\xffhost:6881": not an endpoint merge accepts`},
		// capture and fetch dial their --bootstrap nodes: port 0 used to
		// read "bootstrap \"127.0.0.1:0\": <nil>" (capture) or was
		// taken and every lookup failed as local_error (fetch).
		{"capture bootstrap port 0", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--dht-listen", "127.0.0.1:0", "--duration", "1s", "--bootstrap", "127.0.0.1:1,127.0.0.1:0"}, `capture: --bootstrap: "127.0.0.1:0": port 0 is outside 1-65535`},
		{"fetch bootstrap port 0", []string{"fetch", "--bootstrap", "127.0.0.1:0", hashes, "-o", filepath.Join(dir, "r.parquet")}, `fetch: --bootstrap: "127.0.0.1:0": port 0 is outside 1-65535`},
		{"fetch bootstrap no port", []string{"fetch", "--bootstrap", "127.0.0.1", hashes, "-o", filepath.Join(dir, "r.parquet")}, `fetch: --bootstrap: "127.0.0.1": missing port: want HOST:PORT`},
		// An endpoint with no port (a router, a peer) said only "not HOST:PORT".
		{"capture bootstrap missing port", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--bootstrap", "127.0.0.1"}, `capture: --bootstrap: "127.0.0.1": missing port: want HOST:PORT`},
		{"capture dht-state is a file", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--dht-listen", "127.0.0.1:0", "--duration", "1s", "--bootstrap", "127.0.0.1:1", "--dht-state", hashes}, "capture: --dht-state " + hashes + ": not a directory"},
		// A NaN rate was taken as no limit at all, a negative --dht-rate
		// too (only 0 means unlimited).
		{"capture max-rps NaN", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--dht-listen", "127.0.0.1:0", "--duration", "1s", "--bootstrap", "127.0.0.1:1", "--dht-rate", "NaN"}, "capture: --dht-rate: NaN is not a finite number"},
		{"capture max-rps negative", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--dht-listen", "127.0.0.1:0", "--duration", "1s", "--bootstrap", "127.0.0.1:1", "--dht-rate", "-1"}, "capture: --dht-rate: -1 is negative"},
		{"fetch dht-rate NaN", []string{"fetch", "--no-dht", "--dht-rate", "NaN", hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --dht-rate: NaN is not a finite number"},
		{"fetch dht-rate negative", []string{"fetch", "--bootstrap", "127.0.0.1:1", "--dht-rate", "-5", hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --dht-rate: -5 is negative"},
		{"fetch metadata-memory negative", []string{"fetch", "--no-dht", "--metadata-memory", "-1", hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --metadata-memory: -1 is negative"},
		{"empty es-index", []string{"export", "--data", data, "--format", "es-bulk", "--es-index", ""}, "export: --es-index: empty"},
		{"blank es-index", []string{"export", "--data", data, "--format", "es-bulk", "--es-index= "}, "export: --es-index: empty"},
		{"export extra argument", []string{"export", "--data", data, "--format", "csv", "state.csv"}, `export: unexpected argument "state.csv"`},
		{"data is a file", []string{"dedup", "--data", hashes, hashes}, "is a file, not a dataset folder"},
		{"dedup empty now", []string{"dedup", "--data", data, "--now", "", hashes}, "dedup: --now: empty"},
		{"merge empty now", []string{"merge", "--data", data, "--now=", hashes}, "merge: --now: empty"},
		{"status empty now", []string{"status", "--data", data, "--now", ""}, "status: --now: empty"},
		// Checked in the command's action, in capture.Run or in
		// fetch.Options.Validate before: the messages named no flag
		// ("timeouts must be positive"), or three at once, or read
		// "--batch-hashes: ..." with no command where the others had one.
		{"dedup batch-hashes negative", []string{"dedup", "--data", data, "--batch-hashes", "-1", hashes}, "dedup: --batch-hashes: -1 is negative"},
		{"dedup bloom-fp 1", []string{"dedup", "--data", data, "--bloom-fp", "1", hashes}, "dedup: --bloom-fp: 1 is not between 0 and 1"},
		{"plan new-share", []string{"plan-retries", "--data", data, "-o", "-", "--new-share", "1.5"}, "plan-retries: --new-share: 1.5 is outside [0, 1]"},
		{"capture node-ids 0", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--bootstrap", "", "--node-ids", "0"}, "capture: --node-ids: 0 is outside 1-256"},
		{"capture node-ids 257", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--bootstrap", "", "--node-ids", "257"}, "capture: --node-ids: 257 is outside 1-256"},
		{"capture max-observations", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--bootstrap", "", "--max-observations", "-1"}, "capture: --max-observations: -1 is negative"},
		{"capture duration", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--bootstrap", "", "--duration=-1m"}, "capture: --duration: -1m is negative"},
		// --dht-listen was checked after the --bootstrap routers were looked
		// up (with the default ones, a DNS failure was reported instead).
		{"capture listen not HOST:PORT", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--bootstrap", "127.0.0.1:1", "--dht-listen", "abc"}, `capture: --dht-listen: "abc": missing port: want HOST:PORT`},
		{"capture listen bad port", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--bootstrap", "", "--dht-listen", "127.0.0.1:http"}, `capture: --dht-listen: "127.0.0.1:http": port "http" is not a number from 0 to 65535`},
		{"capture listen past the last port", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--bootstrap", "127.0.0.1:1", "--dht-listen", ":65535", "--node-ids", "2"},
			`capture: --dht-listen: ":65535" with --node-ids 2: node i listens on port 65535+i, past 65535 for the last one; give a port of at most 65534, or port 0 for free ports`},
		// fetch's said "address abc: missing port in address".
		{"fetch listen no port", []string{"fetch", "--no-dht", "--dht-listen", "abc", hashes, "-o", filepath.Join(dir, "r.parquet")},
			`fetch: --dht-listen: "abc": missing port: want HOST:PORT (such as :6881 for every address, or 127.0.0.1:6881)`},
		{"fetch concurrency", []string{"fetch", "--no-dht", "--concurrency", "0", hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --concurrency: 0 is outside 1-65536"},
		{"fetch peers-per-hash", []string{"fetch", "--no-dht", "--peers-per-hash", "0", hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --peers-per-hash: 0 is less than 1"},
		{"fetch timeout", []string{"fetch", "--no-dht", "--timeout", "0", hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --timeout: 0s is not positive"},
		{"fetch peer-timeout", []string{"fetch", "--no-dht", "--peer-timeout=-1s", hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --peer-timeout: -1s is not positive"},
		{"fetch connect-timeout", []string{"fetch", "--no-dht", "--connect-timeout", "0s", hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --connect-timeout: 0s is not positive"},
		{"fetch deadline", []string{"fetch", "--no-dht", "--deadline=-5m", hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --deadline: -5m is negative"},
		{"fetch max-metadata-size", []string{"fetch", "--no-dht", "--max-metadata-size", "0", hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --max-metadata-size: 0 is outside 1-1073741824"},
		{"merge max-metadata-size", []string{"merge", "--data", data, "--max-metadata-size", "1073741825", hashes}, "merge: --max-metadata-size: 1073741825 is outside 1-1073741824 (1 GiB)"},
		{"log-format", []string{"merge", "--data", data, "--log-format", "xml", hashes}, `merge: --log-format "xml": want text or json`},
		{"stats-json is the output", []string{"fetch", "--no-dht", "--stats-json", filepath.Join(dir, "r.parquet"), hashes, "-o", filepath.Join(dir, "r.parquet")}, "fetch: --stats-json: " + filepath.Join(dir, "r.parquet") + " is also the output"},
		{"no data", []string{"status"}, "status: --data DIR (or INFOHASH_DATA) is required"},
		{"export tier", []string{"export", "--data", data, "--tier", "warm"}, `export: --tier "warm": want hot or cold`},
		{"status format", []string{"status", "--data", data, "--format", "yaml"}, `status: --format "yaml": want text or json`},
		{"policy set data is a file", []string{"policy", "set", "--data", hashes, "plan.lease=1h"}, "policy set: --data: " + hashes + " is a file"},
		// A dangling link as --data failed with "open DIR: no such file
		// or directory", exit 1; a --dht-state in a missing folder was
		// made with its parents (mkdir -p), and the run went on.
		{"data a dangling link", []string{"dedup", "--data", dangling, hashes}, "dedup: --data: " + dangling + " is a symbolic link to " + filepath.Join(elsewhere, "gone") + ", which does not exist"},
		{"fetch dht-state parent missing", []string{"fetch", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--dht-state", typo, hashes, "-o", filepath.Join(dir, "r.parquet")},
			"fetch: --dht-state: " + typo + ": no such folder, and its parent folder " + filepath.Dir(typo) + " does not exist to create it in"},
		{"capture dht-state parent missing", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1s", "--dht-state", typo},
			"capture: --dht-state: " + typo + ": no such folder"},
		{"capture dht-state parent a file", []string{"capture", "-o", filepath.Join(dir, "o.parquet"), "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--duration", "1s", "--dht-state", filepath.Join(hashes, "state")},
			"capture: --dht-state: " + filepath.Join(hashes, "state") + ": no such folder, and " + hashes + " is not a folder to create it in"},
		{"fetch dht-state a dangling link", []string{"fetch", "--bootstrap", "", "--dht-listen", "127.0.0.1:0", "--dht-state", dangling, hashes, "-o", filepath.Join(dir, "r.parquet")},
			"fetch: --dht-state: " + dangling + " is a symbolic link to"},
		// A newline in a path named in the error split it over two lines.
		{"data with a newline", []string{"dedup", "--data", filepath.Join(nl, "ds"), hashes}, `dedup: dataset: ` + dir + `/no\nsuch/ds: no dataset there, and its parent folder ` + dir + `/no\nsuch does not exist`},
		{"stats-json with a newline", []string{"dedup", "--data", data, "--stats-json", filepath.Join(nl, "s.json"), hashes}, `dedup: --stats-json: ` + dir + `/no\nsuch/s.json: directory`},
		{"-o with a newline", []string{"plan-retries", "--data", data, "-o", filepath.Join(nl, "j.parquet")}, `plan-retries: -o: ` + dir + `/no\nsuch/j.parquet: directory`},
		{"input with a newline", []string{"fetch", "--no-dht", nl, "-o", filepath.Join(dir, "r.parquet")}, `fetch: ` + dir + `/no\nsuch: no such file or directory`},
		{"blocklist with escape codes", []string{"export", "--data", data, "--blocklist", filepath.Join(dir, "\x1b[2J\r"), "-o", "-"}, `export: --blocklist: open ` + dir + `/\x1b[2J\r: no such file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(append([]string{"infohash"}, tt.args...), strings.NewReader(""), &out, &errb)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, errb.String())
			}
			msg := strings.TrimSpace(errb.String())
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("stderr %q: want one line with %q", msg, tt.want)
			}
			// Every message starts with the command, as the user typed it.
			cmd := tt.args[0]
			if cmd == "policy" {
				cmd += " " + tt.args[1]
			}
			if !strings.HasPrefix(msg, "infohash: "+cmd+": ") {
				t.Fatalf("stderr %q does not start with %q", msg, "infohash: "+cmd+": ")
			}
			// Nothing on stdout: in a pipeline it is the next stage's input
			// (a missing -o used to print the command's help there).
			if out.Len() != 0 {
				t.Fatalf("stdout holds %d bytes: %.80q", out.Len(), out.String())
			}
			if _, err := os.Stat(data); err == nil {
				t.Fatalf("%s was created: the check came after work began", data)
			}
			if names, _ := os.ReadDir(dir); len(names) != 1 { // h.txt
				t.Fatalf("%s holds %v: the check came after work began", dir, names)
			}
		})
	}
}

func TestCheckHostPort(t *testing.T) {
	for s, want := range map[string]string{
		"127.0.0.1:6881": "", "[::1]:1": "", "localhost:65535": "",
		"127.0.0.1:65536": "port 65536 is outside 1-65535", "127.0.0.1:-1": "port -1 is outside 1-65535",
		"": "not HOST:PORT", ":80": "no host", "a:b:c": "not HOST:PORT",
		// A host alone, port missing: it said only "not HOST:PORT".
		"127.0.0.1": "missing port: want HOST:PORT", "8.8.8.8": "missing port: want HOST:PORT",
		"localhost": "missing port: want HOST:PORT", "[::1]": "missing port: want HOST:PORT",
		"::1":    "not HOST:PORT: an IPv6 address goes in brackets, [ADDRESS]:PORT",
		"::1:80": "not HOST:PORT: an IPv6 address goes in brackets, [ADDRESS]:PORT",
	} {
		if got := checkHostPort(s); got != want {
			t.Errorf("checkHostPort(%q) = %q, want %q", s, got, want)
		}
	}
}
