package merge

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestFieldBounds: a results file whose detail, served_by, lease_id,
// outcome or peer failure address is over its fixed bound is bad input
// (exit 2), one line naming the file, the row or rows, the column, the
// size and the bound, and nothing is committed; at the bound it is
// merged. A value far over the bound is refused from its page's header;
// one a byte over passes that check (it leaves room for a page's
// encoding) and its row is refused.
func TestFieldBounds(t *testing.T) {
	h := hashAt(0x07, 1)
	job := schema.Job{InfoHash: h, HashType: schema.HashV1, Attempt: 1}
	info, ih := torrentInfo("bounded")
	fail := func(f func(*schema.Result)) schema.Result {
		r := failure(job, schema.OutcomeConnectFailed, t0+hour, schema.PeerFailure{Addr: "127.0.0.1:1", Class: schema.OutcomeConnectFailed, At: t0 + hour})
		f(&r)
		return r
	}
	ok := func(servedBy string) schema.Result {
		r := success(schema.Job{InfoHash: ih, HashType: schema.HashV1, Attempt: 1}, info, t0+hour)
		r.ServedBy = servedBy
		return r
	}
	host := func(n int) string { return strings.Repeat("h", n-5) + ":6881" } // n bytes
	hex := schema.Hex(h)
	tests := []struct {
		name string
		row  schema.Result
		want string // the error after "merge: FILE: ", "" to be merged
	}{
		{"detail at the bound", fail(func(r *schema.Result) { r.Detail = strings.Repeat("d", 64<<10) }), ""},
		{"detail a byte over", fail(func(r *schema.Result) { r.Detail = strings.Repeat("d", 64<<10+1) }),
			"row 1: " + hex + ": detail of 65537 bytes, over its bound of 65536 bytes"},
		{"detail of 1 MiB", fail(func(r *schema.Result) { r.Detail = strings.Repeat("d", 1<<20) }),
			"rows 1-1: a page of detail declares 1048586 bytes for 1 value, over 65536 bytes a value (detail's bound)"},
		{"lease_id a byte over", fail(func(r *schema.Result) { r.LeaseID = strings.Repeat("L", 129) }),
			"row 1: " + hex + ": lease_id of 129 bytes, over its bound of 128 bytes"},
		{"lease_id of 1 MiB", fail(func(r *schema.Result) { r.LeaseID = strings.Repeat("L", 1<<20) }),
			"rows 1-1: a page of lease_id declares 1048586 bytes for 1 value, over 128 bytes a value (lease_id's bound)"},
		{"outcome a byte over", fail(func(r *schema.Result) { r.Outcome = strings.Repeat("o", 65) }),
			"row 1: " + hex + ": outcome of 65 bytes, over its bound of 64 bytes"},
		{"peer address a byte over", fail(func(r *schema.Result) { r.PeerFailures[0].Addr = host(263) }),
			"row 1: " + hex + ": peer_failures[0]: \"" + host(263) + "\" is not a peer endpoint (host:port)"},
		{"peer class a byte over", fail(func(r *schema.Result) { r.PeerFailures[0].Class = strings.Repeat("c", 65) }),
			"row 1: " + hex + ": peer_failures[0].class of 65 bytes, over its bound of 64 bytes"},
		{"peer address of 64 KiB", fail(func(r *schema.Result) { r.PeerFailures[0].Addr = host(64 << 10) }),
			"row group 0: a page of peer_failures.list.element.addr declares 65547 bytes for 1 value, over 262 bytes a value (addr's bound)"},
		{"served_by at the bound", ok(host(262)), ""},
		{"served_by a byte over", ok(host(263)), "row 1: " + schema.Hex(ih) + ": served_by of 263 bytes, over its bound of 262 bytes"},
		{"served_by of 64 KiB", ok(host(64 << 10)),
			"rows 1-1: a page of served_by declares 65545 bytes for 1 value, over 262 bytes a value (served_by's bound)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeDataset(t, []schema.State{newHash(h, t0)})
			path := writeResults(t, []schema.Result{tt.row})
			before, digests := datasettest.Snapshot(t, dir), datasettest.Digests(t, dir)
			_, err := tryMerge(dir, t0+2*hour, path)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("merge: %v", err)
				}
				return
			}
			want := "merge: " + path + ": " + tt.want
			if exitcode.Of(err) != exitcode.Usage || err.Error() != want {
				t.Fatalf("err = %v\nwant bad input: %s", err, want)
			}
			if datasettest.Snapshot(t, dir) != before || datasettest.Digests(t, dir) != digests {
				t.Fatal("the refused file changed the dataset")
			}
		})
	}
}

// TestFieldBoundsStdin: an Arrow stream on stdin whose detail is a byte
// over its bound (within its record batch's padding) is refused by its
// row, and set aside.
func TestFieldBoundsStdin(t *testing.T) {
	h := hashAt(0x07, 1)
	r := failure(schema.Job{InfoHash: h, HashType: schema.HashV1, Attempt: 1}, schema.OutcomeNoPeers, t0+hour)
	r.Detail = strings.Repeat("d", 65537)
	stream := resultStream(t, []schema.Result{r})
	dir := makeDataset(t, []schema.State{newHash(h, t0)})
	before := datasettest.Snapshot(t, dir)
	o := DefaultOptions()
	o.Data, o.Now, o.Inputs, o.Stdin = dir, tm(t0+2*hour), []string{"-"}, bytes.NewReader(stream)
	_, err := Run(context.Background(), o)
	want := "merge: stdin: row 1: " + schema.Hex(h) + ": detail of 65537 bytes, over its bound of 65536 bytes"
	wantStdinSetAside(t, dir, before, err, want)
}
