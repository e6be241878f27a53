package merge

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// cutResults plans jobs for 24 hashes and returns fetch's results for
// them as an Arrow stream of batches of 5 (oks, failures with a peer to
// penalise, a released row), and where each batch ends in it.
func cutResults(t *testing.T, dir string) (stream []byte, ends []int, jobs []schema.Job) {
	t.Helper()
	jobs = planJobs(t, dir, t0, 100)
	infos := map[schema.Hash][]byte{}
	for i := range 24 {
		info, h := torrentInfo(fmt.Sprintf("t%d", i))
		infos[h] = info
	}
	var rs []schema.Result
	for i, j := range jobs {
		at := t0 + minute + int64(i)*1000
		switch info, ok := infos[j.InfoHash]; {
		case ok:
			rs = append(rs, success(j, info, at))
		case i%3 == 0:
			rs = append(rs, released(j, at))
		default:
			rs = append(rs, failure(j, schema.OutcomeHashMismatch, at,
				schema.PeerFailure{Addr: fmt.Sprintf("127.0.0.1:%d", 7000+i), Class: schema.OutcomeHashMismatch, At: at}))
		}
	}
	if len(jobs) != 24 {
		t.Fatalf("planned %d jobs, want 24", len(jobs))
	}
	var buf bytes.Buffer
	w := rowio.NewArrowWriter[schema.Result]("test", &buf)
	for lo := 0; lo < len(rs); lo += 5 {
		if err := w.Write(rs[lo:min(lo+5, len(rs))]); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, buf.Len())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), ends, jobs
}

// cutDataset is a dataset of hashes for cutResults: the oks' hashes
// (a torrentInfo's) and others, in several partitions.
func cutDataset(t *testing.T) string {
	t.Helper()
	var states []schema.State
	for i := range 24 {
		h := hashAt(byte(0x10*(i%5)), uint64(i))
		if i%4 == 0 {
			_, h = torrentInfo(fmt.Sprintf("t%d", i))
		}
		states = append(states, newHash(h, t0-day))
	}
	return makeDataset(t, states)
}

// mergeStdin merges stream from stdin at now.
func mergeStdin(dir string, now int64, stream []byte) (Stats, error) {
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs, o.Stdin = dir, tm(now), []string{"-"}, bytes.NewReader(stream)
	return Run(context.Background(), o)
}

// tables is what a merge changes of a dataset, but its ledger.
type tables struct {
	State    map[schema.Hash]schema.State
	Torrents []schema.Torrent
	Peers    []schema.PeerPenalty
	Leases   []schema.Lease
}

func tablesOf(t *testing.T, dir string) tables {
	t.Helper()
	tb := tables{State: stateOf(t, dir), Torrents: readTable[schema.Torrent](t, dir, dataset.TableTorrents),
		Peers: readTable[schema.PeerPenalty](t, dir, dataset.TablePeers), Leases: readTable[schema.Lease](t, dir, dataset.TableLeases)}
	slices.SortFunc(tb.Torrents, func(a, b schema.Torrent) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
	slices.SortFunc(tb.Peers, func(a, b schema.PeerPenalty) int { return strings.Compare(a.Addr, b.Addr) })
	slices.SortFunc(tb.Leases, func(a, b schema.Lease) int { return bytes.Compare(a.InfoHash[:], b.InfoHash[:]) })
	return tb
}

// TestMergeCutStream: fetch killed while writing a batch leaves merge a
// stream cut mid-message. Its whole batches are applied and committed,
// and the run is partial (exit 3), saying in one line how many rows got
// through and that the other jobs stay leased; the spool is not kept,
// and not set aside as bad input. So is a stream that ends exactly
// between two messages without its end-of-stream marker (fetch killed
// between two batches): applied, exit 3, saying so. Either way, the whole
// stream merged afterwards (fetch's output kept, sent again) applies the
// rest and counts nothing twice: the dataset ends as one that merged the
// whole stream once (state, torrents, peers, leases), and the cut bytes
// merged again are a no-op.
func TestMergeCutStream(t *testing.T) {
	base := cutDataset(t)
	stream, ends, jobs := cutResults(t, base)
	whole := t.TempDir()
	if err := os.CopyFS(whole, os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	now := t0 + 10*minute
	if _, err := mergeStdin(whole, now, stream); err != nil {
		t.Fatal(err)
	}
	want := tablesOf(t, whole)
	const cutMsg, noEnd = "the stream was cut mid-message after %d complete rows, which were applied",
		"the stream ended without its end-of-stream marker after %d complete rows, which were applied"
	for _, tt := range []struct {
		name string
		cut  int
		rows int64
		code int
		want string // what the error says, of rows
	}{
		{"inside a message", ends[2] + (ends[3]-ends[2])/2, 15, exitcode.Partial, cutMsg},
		{"inside a message's length", ends[2] + 6, 15, exitcode.Partial, cutMsg},
		{"after a message's continuation marker", ends[2] + 4, 15, exitcode.Partial, cutMsg},
		{"before a message's metadata", ends[2] + 8, 15, exitcode.Partial, cutMsg},
		{"between messages, no end marker", ends[2], 15, exitcode.Partial, noEnd},
		{"after the last batch, no end marker", ends[4], 24, exitcode.Partial, noEnd},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
			st, err := mergeStdin(dir, now, stream[:tt.cut])
			if exitcode.Of(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d", exitcode.Of(err), err, tt.code)
			}
			if st.Results != tt.rows || !st.Committed {
				t.Fatalf("applied %d results (committed %v), want %d", st.Results, st.Committed, tt.rows)
			}
			if tt.code == exitcode.Partial {
				msg := err.Error()
				for _, w := range []string{fmt.Sprintf(tt.want, tt.rows),
					"the jobs whose rows did not get through stay leased until their lease_until"} {
					if !strings.Contains(msg, w) {
						t.Errorf("err = %q, want it to say %q", msg, w)
					}
				}
				if strings.Contains(msg, "\n") {
					t.Errorf("err = %q, want one line", msg)
				}
			}
			if ents, _ := os.ReadDir(filepath.Join(dir, inboxDir)); len(ents) != 0 {
				t.Fatalf("inbox holds %v, want the applied spool gone", ents)
			}
			got := tablesOf(t, dir)
			for _, j := range jobs[tt.rows:] { // cut off: untouched, leased
				if s := got.State[j.InfoHash]; s.Attempts != 0 || s.MetadataStatus != schema.StatusNew {
					t.Fatalf("%x, cut off, was applied: %+v", j.InfoHash, s)
				}
				if !slices.ContainsFunc(got.Leases, func(l schema.Lease) bool { return l.InfoHash == j.InfoHash && l.LeaseID == j.LeaseID }) {
					t.Fatalf("%x, cut off, lost its lease", j.InfoHash)
				}
			}
			if st, err := mergeStdin(dir, now, stream[:tt.cut]); err != nil || st.InputsSkipped != 1 {
				t.Fatalf("the cut stream again: %+v, %v; want a no-op", st, err)
			}
			if _, err := mergeStdin(dir, now, stream); err != nil {
				t.Fatalf("the whole stream after the cut one: %v", err)
			}
			if got := tablesOf(t, dir); !reflect.DeepEqual(got, want) {
				t.Fatalf("cut stream then whole stream:\n%+v\nwant, as the whole stream once:\n%+v", got, want)
			}
		})
	}
}

// TestMergeCorruptStreamStaysBad: a stream whose bytes are garbage after
// whole batches, not cut, is bad input as before: nothing is applied, and
// it is set aside whole for a person to look at; so is a stream cut
// before its first whole batch, which holds nothing to apply.
func TestMergeCorruptStreamStaysBad(t *testing.T) {
	base := cutDataset(t)
	stream, ends, _ := cutResults(t, base)
	// A message framed as one, whose metadata is junk, then more junk.
	garbage := append(bytes.Clone(stream[:ends[2]]), 0xff, 0xff, 0xff, 0xff, 32, 0, 0, 0)
	garbage = append(garbage, bytes.Repeat([]byte{0x5a}, 500)...)
	for _, tt := range []struct {
		name, want string
		in         []byte
	}{
		{"garbage after whole batches", "corrupt Arrow IPC stream: malformed message metadata", garbage},
		{"junk length after whole batches", "over a reading limit", append(bytes.Clone(stream[:ends[2]]), bytes.Repeat([]byte{0x5a}, 50)...)},
		{"cut inside the first batch", "cut mid-message after 0 complete rows", stream[:ends[0]-10]},
		{"cut inside the schema", "ends 20 bytes into its schema", stream[:20]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
			st, err := mergeStdin(dir, t0+10*minute, tt.in)
			if exitcode.Of(err) != exitcode.Usage || st.Committed || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v (committed %v), want bad input saying %q", err, st.Committed, tt.want)
			}
			ents, _ := os.ReadDir(filepath.Join(dir, inboxDir))
			if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".results.bad") {
				t.Fatalf("inbox holds %v, want the input set aside", ents)
			}
			if kept, _ := os.ReadFile(filepath.Join(dir, inboxDir, ents[0].Name())); !bytes.Equal(kept, tt.in) {
				t.Fatalf("set aside %d bytes of %d", len(kept), len(tt.in))
			}
		})
	}
}

// TestMergeCutFileNamed: a cut stream named as RESULTS (what an earlier
// merge set aside as *.results.bad, say) is applied as stdin is, and,
// not being merge's own spool, left where it is.
func TestMergeCutFileNamed(t *testing.T) {
	dir := cutDataset(t)
	stream, ends, _ := cutResults(t, dir)
	path := filepath.Join(t.TempDir(), "part-0a1b.results.bad")
	if err := os.WriteFile(path, stream[:ends[1]+40], 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := tryMerge(dir, t0+10*minute, path)
	if exitcode.Of(err) != exitcode.Partial || st.Results != 10 || !strings.Contains(err.Error(), path+": the stream was cut") {
		t.Fatalf("%d results, err = %v; want 10 applied, partial", st.Results, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// TestMergeNoEndFileNamed: a file named as RESULTS is read as it is: a
// stream in it that ends between two messages without its end-of-stream
// marker is applied whole (exit 0), as before; only a stream merge
// spooled must end with the marker.
func TestMergeNoEndFileNamed(t *testing.T) {
	dir := cutDataset(t)
	stream, ends, _ := cutResults(t, dir)
	path := filepath.Join(t.TempDir(), "results.arrow")
	if err := os.WriteFile(path, stream[:ends[1]], 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := tryMerge(dir, t0+10*minute, path)
	if err != nil || st.Results != 10 {
		t.Fatalf("%d results, err = %v; want 10 applied, no error", st.Results, err)
	}
}
