package dhtstate

import (
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
	"github.com/infohash/infohash/internal/exitcode"
)

const hexID = "0102030405060708090a0b0c0d0e0f1011121314"

func TestContacts(t *testing.T) {
	id := [20]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	v4 := func(ap netip.AddrPort) bool { return ap.Addr().Is4() }
	for _, tc := range []struct {
		name string
		in   []Entry
		keep func(netip.AddrPort) bool
		max  int
		want []string // addresses kept
	}{
		{"good", []Entry{{hexID, "127.0.0.1:6881"}, {hexID, "[::1]:6881"}}, nil, 0, []string{"127.0.0.1:6881", "[::1]:6881"}},
		{"IPv4 only", []Entry{{hexID, "127.0.0.1:6881"}, {hexID, "[::1]:6881"}}, v4, 0, []string{"127.0.0.1:6881"}},
		{"short id", []Entry{{hexID[:38], "127.0.0.1:1"}, {hexID, "127.0.0.2:1"}}, nil, 0, []string{"127.0.0.2:1"}},
		{"not hex", []Entry{{strings.Repeat("zz", 20), "127.0.0.1:1"}}, nil, 0, nil},
		{"no port", []Entry{{hexID, "127.0.0.1"}, {hexID, "127.0.0.1:0"}}, nil, 0, nil},
		{"host name", []Entry{{hexID, "router.example:6881"}}, nil, 0, nil},
		{"at most max", []Entry{{hexID, "127.0.0.1:1"}, {"bad", "x"}, {hexID, "127.0.0.2:1"}, {hexID, "127.0.0.3:1"}}, nil, 2,
			[]string{"127.0.0.1:1", "127.0.0.2:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := Contacts(tc.in, tc.keep, tc.max)
			var got []string
			for _, c := range cs {
				if c.ID != id {
					t.Errorf("id %x, want %x", c.ID, id)
				}
				got = append(got, c.Addr.String())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("kept %v, want %v", got, tc.want)
			}
			if back := Contacts(Entries(cs), nil, 0); len(cs) > 0 && !reflect.DeepEqual(back, cs) {
				t.Errorf("round trip: %v, want %v", back, cs)
			}
		})
	}
}

func TestLoadSave(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	var v struct{ Nodes []Entry }
	if found, err := Load(p, &v); found || err != nil {
		t.Fatalf("missing file: found %v, err %v; want neither", found, err)
	}
	want := []Entry{{hexID, "127.0.0.1:6881"}}
	v.Nodes = want
	if err := Save(p, v); err != nil {
		t.Fatal(err)
	}
	v.Nodes = nil
	if found, err := Load(p, &v); !found || err != nil || !reflect.DeepEqual(v.Nodes, want) {
		t.Fatalf("found %v, err %v, nodes %v; want %v", found, err, v.Nodes, want)
	}
	if err := os.WriteFile(p, []byte(`{"Nodes": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if found, err := Load(p, &v); found || err == nil || !strings.Contains(err.Error(), p+": not JSON") {
		t.Fatalf("truncated file: found %v, err %v; want an error naming %s", found, err, p)
	}
}

// TestLoadRefuses: a FIFO or an oversized file at the state's path is an
// error naming it, read neither (a FIFO blocked the run).
func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxStateFile+1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{{fifo, "not a regular file"}, {big, "more than a state file holds"}} {
		done := make(chan error, 1)
		go func() {
			var v struct{ Nodes []Entry }
			_, err := Load(c.path, &v)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.HasPrefix(err.Error(), c.path+": ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Load(%s): err %v, want %q", c.path, err, c.want)
			}
		case <-time.After(time.Minute): // a bound on a hang, not a speed
			t.Fatalf("Load(%s) blocked", c.path)
		}
	}
}

func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	release, err := Lock(dir, "lock", "fetch")
	if err != nil {
		t.Fatal(err)
	}
	// flock(2) locks belong to the open file: a second open conflicts
	// even within one process.
	if _, err := Lock(dir, "lock", "fetch"); exitcode.Of(err) != exitcode.Locked ||
		!strings.Contains(err.Error(), "fetch: --dht-state "+dir+" is in use by another fetch (pid ") {
		t.Fatalf("second lock: %v (exit %d); want refused with the locked status", err, exitcode.Of(err))
	}
	release()
	again, err := Lock(dir, "lock", "fetch")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(file, "lock", "capture"); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), file) {
		t.Fatalf("a file as the directory: %v (exit %d); want a usage error naming it", err, exitcode.Of(err))
	}
}

// FuzzContacts: any entries decode without panicking, to contacts that
// encode and decode back to themselves.
func FuzzContacts(f *testing.F) {
	f.Add(hexID, "127.0.0.1:6881")
	f.Add(hexID, "[::ffff:1.2.3.4]:1")
	f.Add("zz", "1.2.3.4:0")
	f.Fuzz(func(t *testing.T, id, addr string) {
		cs := Contacts([]Entry{{id, addr}}, nil, 0)
		if back := Contacts(Entries(cs), nil, 0); len(cs) > 0 && !reflect.DeepEqual(back, cs) {
			t.Fatalf("round trip of %q %q: %v, want %v", id, addr, back, cs)
		}
	})
}

// TestLoadNotRegular: what Load refuses is refused on the open file
// (fsutil.OpenRegularTarget), so a FIFO swapped in after a look at the
// path cannot block it: a FIFO, a directory, a link to a FIFO are
// errors naming the path and what is there, at once; a link to a state
// file is read through, as before.
func TestLoadNotRegular(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for _, err := range []error{
		syscall.Mkfifo(at("fifo"), 0o644),
		os.Mkdir(at("dir"), 0o755),
		os.Symlink(at("fifo"), at("link-to-fifo")),
		os.WriteFile(at("state.json"), []byte(`{"Nodes":[]}`), 0o644),
		os.Symlink(at("state.json"), at("link-to-state")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ name, want string }{
		{"fifo", "not a regular file (a FIFO)"},
		{"dir", "not a regular file (a directory)"},
		{"link-to-fifo", "not a regular file (a FIFO)"},
		{"link-to-state", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := fsutiltest.Unblocked(t, at(tt.name), func() error {
				var v struct{ Nodes []Entry }
				_, err := Load(at(tt.name), &v)
				return err
			})
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || err.Error() != at(tt.name)+": "+tt.want) {
				t.Fatalf("Load(%s): err %v, want %q", tt.name, err, tt.want)
			}
		})
	}
}
