package dedup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
	"golang.org/x/sys/unix"

	"github.com/infohash/infohash/formats/dataset"
)

// shortRacyWindow lets a test's inputs be cached once they are a few
// milliseconds old, instead of two seconds.
func shortRacyWindow(t *testing.T) {
	t.Helper()
	old := racyWindow
	racyWindow = 5 * time.Millisecond
	t.Cleanup(func() { racyWindow = old })
}

// settle waits until files written now are old enough to be cached.
func settle() { time.Sleep(20 * time.Millisecond) }

// watchOpens reports, through the returned func, whether any process
// opened or read one of paths since the call (inotify(7)).
func watchOpens(t *testing.T, paths ...string) func() []string {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	names := map[int32]string{}
	for _, p := range paths {
		wd, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN|unix.IN_ACCESS)
		if err != nil {
			t.Fatal(err)
		}
		names[int32(wd)] = filepath.Base(p)
	}
	return func() []string {
		var got []string
		buf := make([]byte, 64<<10)
		for {
			n, err := unix.Read(fd, buf)
			if errors.Is(err, unix.EAGAIN) {
				return got
			} else if err != nil {
				t.Fatal(err)
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				wd := int32(uint32(buf[off]) | uint32(buf[off+1])<<8 | uint32(buf[off+2])<<16 | uint32(buf[off+3])<<24)
				l := int(uint32(buf[off+12]) | uint32(buf[off+13])<<8 | uint32(buf[off+14])<<16 | uint32(buf[off+15])<<24)
				got = append(got, names[wd])
				off += unix.SizeofInotifyEvent + l
			}
		}
	}
}

// hashList writes a text hash list of n hashes, from seed, at dir/name.
func hashList(t *testing.T, dir, name string, seed byte, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%02x%02x%036x\n", seed, i, 0)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// cacheEntries reads the input cache of dataset data.
func cacheEntries(t *testing.T, data string) []cacheEntry {
	t.Helper()
	es, err := readCache(filepath.Join(data, dataset.InputCacheFile))
	if err != nil {
		t.Fatalf("input cache: %v", err)
	}
	return es
}

// TestInputCacheHitSkipsReading: a re-run over a folder it applied does
// not open its files at all (inotify sees no open nor read), skips them,
// and still applies a new file beside them.
func TestInputCacheHitSkipsReading(t *testing.T) {
	shortRacyWindow(t)
	in := t.TempDir()
	data := filepath.Join(t.TempDir(), "ih")
	old := []string{writeObs(t, in, genObs(1, 500, 200)), writeObs(t, in, genObs(2, 500, 200))}
	settle()
	if st, err := run(t, data, nil, in); err != nil || st.Commits != 1 {
		t.Fatalf("first run: %+v, %v", st, err)
	}
	if es := cacheEntries(t, data); len(es) != 2 {
		t.Fatalf("cache holds %d entries, want the 2 inputs", len(es))
	}
	opened := watchOpens(t, old...)
	st, err := run(t, data, nil, in)
	if err != nil || st.InputsSkipped != 2 || st.Commits != 0 {
		t.Fatalf("re-run: %+v, %v; want both inputs skipped, no commit", st, err)
	}
	if got := opened(); len(got) > 0 {
		t.Fatalf("re-run opened or read applied inputs the cache knows: %v", got)
	}
	writeObs(t, in, genObs(3, 500, 200))
	st, err = run(t, data, nil, in)
	if err != nil || st.InputsSkipped != 2 || st.Commits != 1 {
		t.Fatalf("run with a new file: %+v, %v; want 2 skipped and the new one applied", st, err)
	}
	if got := opened(); len(got) > 0 {
		t.Fatalf("run with a new file opened or read applied inputs: %v", got)
	}
	compare(t, readState(t, data), truth(genObs(1, 500, 200), genObs(2, 500, 200), genObs(3, 500, 200)))
}

// TestInputCacheChangedFileIsRead: a file rewritten in place with other
// content of the same size, its mtime put back, differs from the cached
// one in ctime only; it is read again and applied.
func TestInputCacheChangedFileIsRead(t *testing.T) {
	shortRacyWindow(t)
	dir := t.TempDir()
	data := filepath.Join(t.TempDir(), "ih")
	p := hashList(t, dir, "list.txt", 1, 50)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	settle()
	if st, err := run(t, data, nil, p); err != nil || st.New != 50 {
		t.Fatalf("first run: %+v, %v", st, err)
	}
	if es := cacheEntries(t, data); len(es) != 1 {
		t.Fatalf("cache holds %d entries, want 1", len(es))
	}
	hashList(t, dir, "list.txt", 2, 50)
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(p); err != nil || now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("setup: size and mtime not kept: %v, %v", now, err)
	}
	settle()
	st, err := run(t, data, nil, p)
	if err != nil || st.InputsSkipped != 0 || st.New != 50 {
		t.Fatalf("run on the changed file: %+v, %v; want it applied (50 new hashes)", st, err)
	}
	if st, err := run(t, data, nil, p); err != nil || st.InputsSkipped != 1 {
		t.Fatalf("re-run: %+v, %v; want the file skipped", st, err)
	}
}

// TestInputCacheDamaged: a cache file that is not whole, or not one this
// version writes, is ignored: the run reads its inputs, skips those
// applied, and writes a good cache again.
func TestInputCacheDamaged(t *testing.T) {
	shortRacyWindow(t)
	entry := cacheEntry{Path: "relative/path", Size: 1, ID: strings.Repeat("ab", 16), At: time.Now().UnixNano()}
	for _, tt := range []struct {
		name   string
		damage func(good []byte) []byte
	}{
		{"garbage", func([]byte) []byte { return []byte("\x00\xffnot a cache at all") }},
		{"empty", func([]byte) []byte { return nil }},
		{"cut short", func(good []byte) []byte { return good[:len(good)-7] }},
		{"a byte changed", func(good []byte) []byte {
			b := bytes.Clone(good)
			b[len(b)-10] ^= 1
			return b
		}},
		{"another version", func(good []byte) []byte {
			return bytes.Replace(good, []byte("input-cache 1 "), []byte("input-cache 9 "), 1)
		}},
		{"entry no writer makes", func([]byte) []byte { return encodeCache([]cacheEntry{entry}) }},
		{"not a list", func([]byte) []byte {
			body := []byte(`{"path":"/x"}`)
			return append(encodeCache(nil)[:len(cacheMagic)], fmt.Sprintf("%016x\n%s", xxh3.Hash(body), body)...)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(t.TempDir(), "ih")
			p := hashList(t, dir, "list.txt", 1, 50)
			settle()
			if _, err := run(t, data, nil, p); err != nil {
				t.Fatal(err)
			}
			cache := filepath.Join(data, dataset.InputCacheFile)
			good, err := os.ReadFile(cache)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cache, tt.damage(good), 0o644); err != nil {
				t.Fatal(err)
			}
			opened := watchOpens(t, p)
			st, err := run(t, data, nil, p)
			if err != nil || st.InputsSkipped != 1 {
				t.Fatalf("run with a damaged cache: %+v, %v; want the input skipped", st, err)
			}
			if len(opened()) == 0 {
				t.Fatal("the input was not read: the damaged cache was used")
			}
			if es := cacheEntries(t, data); len(es) != 1 || es[0].Path != p {
				t.Fatalf("cache after the run: %+v, want the input's entry", es)
			}
		})
	}
}

// TestInputCacheRacyEntryIgnored: an entry whose file changed within
// racyWindow of its checksum is not used, even if the file still matches
// it: it could have changed again within its clock's tick.
func TestInputCacheRacyEntryIgnored(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(t.TempDir(), "ih")
	p := hashList(t, dir, "list.txt", 1, 50)
	if _, err := run(t, data, nil, p); err != nil {
		t.Fatal(err)
	}
	if es, err := readCache(filepath.Join(data, dataset.InputCacheFile)); err == nil && len(es) > 0 {
		t.Fatalf("cached a file written just before its checksum: %+v", es)
	}
	// An entry such as a writer with a shorter window would leave.
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := statEntry(p, fi)
	e.ID, e.Kind, e.At = strings.Repeat("00", 16), kindText, e.Ctime+int64(time.Millisecond)
	if err := os.WriteFile(filepath.Join(data, dataset.InputCacheFile), encodeCache([]cacheEntry{e}), 0o644); err != nil {
		t.Fatal(err)
	}
	opened := watchOpens(t, p)
	if st, err := run(t, data, nil, p); err != nil || st.InputsSkipped != 1 {
		t.Fatalf("re-run: %+v, %v; want the input read and skipped", st, err)
	}
	if len(opened()) == 0 {
		t.Fatal("the input was not read: a racy entry was used")
	}
}

// FuzzDecodeCache: no cache file makes decodeCache panic, and what it
// accepts holds only entries a writer makes (one per path, its id as
// checksumFile writes it), and encodes back to itself. Each input is
// tried as a whole file and as the body of one with a right checksum:
// only the latter reaches the JSON, as a fuzzer hardly ever makes a
// checksum match.
func FuzzDecodeCache(f *testing.F) {
	good := cacheEntry{Path: "/in/a.parquet", Dev: 1, Ino: 2, Size: 3, Mtime: 4, Ctime: 5,
		ID: strings.Repeat("0f", 16), Kind: kindArrow, At: 6e9}
	f.Add(encodeCache([]cacheEntry{good}))
	f.Add(encodeCache(nil))
	f.Add([]byte(cacheMagic + "0000000000000000\n[]"))
	f.Add([]byte("garbage"))
	other := good
	other.Path = "/in/b.txt"
	body, _ := json.Marshal([]cacheEntry{good, other})
	f.Add(body)
	f.Fuzz(func(t *testing.T, b []byte) {
		sealed := append(fmt.Appendf(nil, "%s%016x\n", cacheMagic, xxh3.Hash(b)), b...)
		for _, file := range [][]byte{b, sealed} {
			es, err := decodeCache(file)
			if err != nil {
				continue
			}
			paths := map[string]bool{}
			for _, e := range es {
				if !e.valid() || paths[e.Path] || len(e.ID) != 32 || strings.ToLower(e.ID) != e.ID {
					t.Fatalf("accepted an entry no writer makes (one per path, a lowercase hex id): %+v", e)
				}
				paths[e.Path] = true
			}
			again, err := decodeCache(encodeCache(es))
			if err != nil || !reflect.DeepEqual(again, es) {
				t.Fatalf("%q: re-encoded, decodes to %+v, %v; want %+v", file, again, err, es)
			}
		}
	})
}

// TestInputCachePrunes: the entries of files removed, or changed, since
// they were cached leave the cache when it is next written.
func TestInputCachePrunes(t *testing.T) {
	shortRacyWindow(t)
	dir := t.TempDir()
	data := filepath.Join(t.TempDir(), "ih")
	gone, changed, kept := hashList(t, dir, "gone.txt", 1, 5), hashList(t, dir, "changed.txt", 2, 5), hashList(t, dir, "kept.txt", 3, 5)
	settle()
	if _, err := run(t, data, nil, gone, changed, kept); err != nil {
		t.Fatal(err)
	}
	if es := cacheEntries(t, data); len(es) != 3 {
		t.Fatalf("cache holds %d entries, want 3", len(es))
	}
	os.Remove(gone)
	hashList(t, dir, "changed.txt", 4, 6)
	fresh := hashList(t, dir, "fresh.txt", 5, 5)
	settle()
	if _, err := run(t, data, nil, fresh); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range cacheEntries(t, data) {
		got = append(got, filepath.Base(e.Path))
	}
	if strings.Join(got, " ") != "fresh.txt kept.txt" {
		t.Fatalf("cache holds %v, want fresh.txt and kept.txt", got)
	}
}

// TestInputCacheNotWrittenByFailedRun: a run that fails (bad input among
// old, cacheable files) changes no file of the dataset, the cache
// included.
func TestInputCacheNotWrittenByFailedRun(t *testing.T) {
	shortRacyWindow(t)
	dir := t.TempDir()
	data := filepath.Join(t.TempDir(), "ih")
	first := hashList(t, dir, "first.txt", 1, 5)
	good := hashList(t, dir, "good.txt", 2, 5)
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("not a hash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	settle()
	if _, err := run(t, data, nil, first); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(data, dataset.InputCacheFile)
	before, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, data, nil, good, bad); err == nil {
		t.Fatal("a bad input was applied")
	}
	if after, err := os.ReadFile(cache); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("a failed run rewrote the input cache (%v)", err)
	}
}
