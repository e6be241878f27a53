package fetch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestRunHashList: a text list of infohashes (hex, magnet URIs, comments),
// as a file or on stdin, is a list of jobs: each hash attempted once,
// results without a lease, as the README's "manual fetch of a hash list".
func TestRunHashList(t *testing.T) {
	tor := badpeers.NewTorrent(21, 1, 5)
	good := startPeer(t, badpeers.Good, tor)
	hexHash := hex.EncodeToString(tor.InfoHash[:])
	for _, tt := range []struct {
		name, list string
		stdin      bool
	}{
		{"hex on stdin", hexHash + "\n", true},
		{"hex file", "# wanted\n\n" + strings.ToUpper(hexHash) + "\n", false},
		{"magnet file", "magnet:?xt=urn:btih:" + hexHash + "&dn=x\n", false},
		{"no final newline", hexHash, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			o := testOptions()
			o.Output = filepath.Join(dir, "r.parquet")
			o.Peers = []string{good.Addr()}
			if tt.stdin {
				o.Input, o.Stdin = "-", strings.NewReader(tt.list)
			} else {
				o.Input = filepath.Join(dir, "hashes.txt")
				if err := os.WriteFile(o.Input, []byte(tt.list), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			st, err := Run(context.Background(), o)
			if err != nil || st.Jobs != 1 || st.Attempted != 1 {
				t.Fatalf("stats %+v, err %v", st, err)
			}
			res := readResults(t, o.Output)[tor.InfoHash]
			if res.Outcome != schema.OutcomeOK || res.LeaseID != "" || res.HashType != schema.HashV1 {
				t.Fatalf("result %s lease %q type %d", res.Outcome, res.LeaseID, res.HashType)
			}
		})
	}
}

// TestRunInputOfAnotherKind: input that is no jobs and no hash list is
// bad input (exit 2) saying so in one line, not an Arrow reader's limit
// or a Parquet magic number; nothing is written.
func TestRunInputOfAnotherKind(t *testing.T) {
	for _, tt := range []struct {
		name    string
		content []byte
		stdin   bool
		want    string // after "fetch: NAME: " ("fetch: NAME:LINE: " with line)
		line    int
	}{
		{"bad line", []byte("0123456789abcdef0123456789abcdef01234567\nnot a hash\n"), false,
			`infohash "not a hash": want 40 or 64 hex characters, got 10 (a hash list has one infohash or magnet URI a line)`, 2},
		{"export's CSV", []byte("info_hash,info_hash_v2,hash_type\n0123456789abcdef0123456789abcdef01234567,,1\n"), false,
			`"info_hash,info_hash_v2,hash_type" looks like a CSV header: fetch reads jobs (Parquet or an Arrow stream) or ` +
				"a list of one infohash or magnet URI a line (export --format csv output is not an input)", 1},
		{"binary", []byte("\x00\x01\x02garbage"), false,
			"neither Parquet jobs, an Arrow IPC stream of jobs nor a text list of infohashes", 0},
		{"binary on stdin", []byte("\x00\x01\x02garbage"), true,
			"neither an Arrow IPC stream of jobs nor a text list of infohashes", 0},
		{"parquet on stdin", []byte("PAR1\x00\x00\x00\x00PAR1"), true,
			"Parquet on stdin: name the file instead (stdin takes an Arrow IPC stream of jobs or a text list of infohashes)", 0},
		{"empty", nil, false, "empty input", 0},
		{"empty stdin", nil, true, "empty input (nothing came through the pipe: did the command before it fail?)", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			o := testOptions()
			o.Output = filepath.Join(dir, "r.parquet")
			name := "stdin"
			if tt.stdin {
				o.Input, o.Stdin = "-", bytes.NewReader(tt.content)
			} else {
				o.Input = filepath.Join(dir, "in.txt")
				name = o.Input
				if err := os.WriteFile(o.Input, tt.content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Run(context.Background(), o)
			want := "fetch: " + name + ": " + tt.want
			if tt.line > 0 {
				want = fmt.Sprintf("fetch: %s:%d: %s", name, tt.line, tt.want)
			}
			if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("got %v (exit %d)\nwant %q (exit 2)", err, exitcode.Of(err), want)
			}
			if _, serr := os.Stat(o.Output); serr == nil {
				t.Fatal("output written")
			}
		})
	}
}

// TestHashListStartsAsLinesArrive: a hash list piped in slowly starts
// each job as its line arrives, not once 256 lines or the end have come:
// with one line written and the writer still open, the job runs.
func TestHashListStartsAsLinesArrive(t *testing.T) {
	tors := []badpeers.Torrent{badpeers.NewTorrent(22, 1, 5), badpeers.NewTorrent(23, 1, 5)}
	for _, tt := range []struct {
		name  string
		first string // written before waiting for the job to start
	}{
		{"one line", hex.EncodeToString(tors[0].InfoHash[:]) + "\n"},
		{"a line and a comment", "# wanted\n" + hex.EncodeToString(tors[0].InfoHash[:]) + "\n# more to come\n"},
		{"a line and part of the next", hex.EncodeToString(tors[0].InfoHash[:]) + "\n" + hex.EncodeToString(tors[1].InfoHash[:8])},
	} {
		t.Run(tt.name, func(t *testing.T) {
			good := startPeer(t, badpeers.Good, tors...)
			pr, pw := io.Pipe()
			defer pw.Close()
			o := testOptions()
			o.Input, o.Stdin, o.Output = "-", pr, filepath.Join(t.TempDir(), "r.parquet")
			o.Peers = []string{good.Addr()}
			done := make(chan error, 1)
			go func() { _, err := Run(context.Background(), o); done <- err }()
			if _, err := io.WriteString(pw, tt.first); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(backstop)
			for good.Accepted() == 0 {
				select {
				case err := <-done:
					t.Fatalf("run ended before its input: %v", err)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("no job started within %v of its line", backstop)
				}
				time.Sleep(5 * time.Millisecond)
			}
			rest := hex.EncodeToString(tors[1].InfoHash[:]) + "\n"
			if strings.Contains(tt.name, "part") {
				rest = hex.EncodeToString(tors[1].InfoHash[8:]) + "\n"
			}
			if _, err := io.WriteString(pw, rest); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			res := readResults(t, o.Output)
			for _, tor := range tors {
				if r := res[tor.InfoHash]; r.Outcome != schema.OutcomeOK {
					t.Errorf("%x: %s (%s)", tor.InfoHash, r.Outcome, r.Detail)
				}
			}
		})
	}
}

// TestHashListHybridMagnet: a hybrid torrent's magnet names two DHT keys
// (urn:btih and urn:btmh); fetch makes a job of each, as dedup adds both
// to the state. It used to take only the first.
func TestHashListHybridMagnet(t *testing.T) {
	v1 := strings.Repeat("ab", 20)
	v2 := strings.Repeat("cd", 32)
	for _, list := range []string{
		"magnet:?xt=urn:btih:" + v1 + "&xt=urn:btmh:1220" + v2 + "\n",
		"magnet:?xt.1=urn:btmh:1220" + v2 + "&xt.2=urn:btih:" + v1 + "&dn=x\n",
	} {
		l := newHashList("list", bufio.NewReader(strings.NewReader(list)))
		var got []jobRow
		buf := make([]jobRow, 4)
		for {
			n, err := l.read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		l.close()
		keys := map[string]int8{}
		for _, j := range got {
			keys[hex.EncodeToString(j.InfoHash[:])] = j.HashType
		}
		if len(got) != 2 || keys[v1] != schema.HashV1 || keys[v2[:40]] != schema.HashV2 {
			t.Errorf("%q: jobs %v, want the v1 key and the v2 key", list, keys)
		}
	}
}
