package dedup

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// announce is an announce_peer observation of h from node addr, which
// announced port, at t0 plus ms.
func announce(h schema.Hash, addr string, port int32, ms int64) schema.Observation {
	return schema.Observation{InfoHash: h, HashType: schema.HashV1, ObservedAt: t0.UnixMilli() + ms,
		Source: schema.SourceAnnouncePeer, NodeAddr: addr, PeerPort: port, RunID: "t"}
}

// TestAnnouncedPeers: the state's peers are the endpoints announce_peer
// rows name (the sender's IP, the announced port), newest first (to the
// millisecond), each once, at most 8, with a batch's ahead of those already known; rows of
// other sources and endpoints no one can dial are not peers. peers_at is
// the observed_at of the newest announcement that put or kept one there
// (not a later one naming no dialable endpoint; an older batch's keeps
// the state's), null while peers is empty. Through
// both column readers (Parquet files, an Arrow stream on stdin) and both
// row readers (unusual layouts), into new rows and into known ones (a
// splice).
func TestAnnouncedPeers(t *testing.T) {
	a, b, c, d, e := schema.Hash{0x10, 1}, schema.Hash{0x10, 2}, schema.Hash{0x20, 3}, schema.Hash{0x30, 4}, schema.Hash{0x10, 5}
	get := func(h schema.Hash, addr string, ms int64) schema.Observation {
		o := announce(h, addr, 0, ms)
		o.Source = schema.SourceGetPeers
		return o
	}
	first := []schema.Observation{
		get(a, "9.9.9.9:1", 50), // a lookup, not an announcement
		announce(a, "1.1.1.1:5000", 6881, 1000),
		announce(a, "2.2.2.2:5000", 6882, 3007),
		announce(a, "1.1.1.1:7000", 6881, 2000), // the same endpoint again, newer
		announce(a, "[2001:db8::1]:5", 443, 0),
		announce(a, "[::ffff:3.3.3.3]:5", 80, -1000), // v4-mapped: read as IPv4
		announce(a, "4.4.4.4:5", 0, 4000),            // no port (null)
		announce(a, "0.0.0.0:1", 5, 4000),            // cannot be a peer
		announce(a, "224.0.0.1:1", 5, 4000),          // nor multicast
		announce(a, "not an address", 5, 4000),
		announce(a, "", 5, 4000),
		get(b, "8.8.8.8:1", 10),
		get(c, "8.8.8.8:1", 10),
		announce(e, "6.6.6.6:1", 1, 10_000),
		announce(e, "6.6.6.7:1", 1, 20_000),
	}
	// d: more announcers than the bound, more rows than a partition
	// keeps before compacting them.
	for k := range 5000 {
		first = append(first, announce(d, fmt.Sprintf("10.1.%d.%d:9", k/256, k%256), 1000, int64(k)*1000))
	}
	second := []schema.Observation{
		get(c, "8.8.8.8:1", 9000),
		announce(a, "2.2.2.2:1", 6882, 30_000), // known: back to the front
	}
	for k := 1; k <= 7; k++ {
		second = append(second, announce(a, fmt.Sprintf("10.0.0.%d:1", k), 1000, 10_000+int64(k)*1000))
	}
	second = append(second, announce(b, "5.5.5.5:1", 5, 9000), announce(e, "6.6.6.8:1", 1, 5000))
	dNewest := []string{}
	for k := 4999; k > 4991; k-- {
		dNewest = append(dNewest, fmt.Sprintf("10.1.%d.%d:1000", k/256, k%256))
	}
	want1 := map[schema.Hash][]string{
		a: {"2.2.2.2:6882", "1.1.1.1:6881", "[2001:db8::1]:443", "3.3.3.3:80"},
		d: dNewest,
		e: {"6.6.6.7:1", "6.6.6.6:1"},
	}
	want2 := map[schema.Hash][]string{
		a: {"2.2.2.2:6882", "10.0.0.7:1000", "10.0.0.6:1000", "10.0.0.5:1000", "10.0.0.4:1000", "10.0.0.3:1000",
			"10.0.0.2:1000", "10.0.0.1:1000"},
		b: {"5.5.5.5:5"},
		d: dNewest,
		e: {"6.6.6.8:1", "6.6.6.7:1", "6.6.6.6:1"}, // a batch's first, however old
	}
	none := map[schema.Hash][]string{}
	ms := func(d int64) int64 { return t0.UnixMilli() + d }
	at1 := map[schema.Hash]int64{a: ms(3007), d: ms(4999 * 1000), e: ms(20_000)}
	at2 := map[schema.Hash]int64{a: ms(30_000), b: ms(9000), d: ms(4999 * 1000), e: ms(20_000)}
	// Options.AnnouncedPeers per run, and the peers each run leaves: off,
	// the endpoints are not read and the state's are carried as they are.
	for _, tc := range []struct {
		name string
		on   [2]bool
		want [2]map[schema.Hash][]string
		at   [2]map[schema.Hash]int64
	}{
		{"on", [2]bool{true, true}, [2]map[schema.Hash][]string{want1, want2}, [2]map[schema.Hash]int64{at1, at2}},
		{"off", [2]bool{false, false}, [2]map[schema.Hash][]string{none, none}, [2]map[schema.Hash]int64{}},
		{"on then off", [2]bool{true, false}, [2]map[schema.Hash][]string{want1, want1}, [2]map[schema.Hash]int64{at1, at1}},
	} {
		for _, kind := range []string{"parquet", "parquet row reader", "arrow", "arrow row reader"} {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				defer func() { fastPath = true }()
				fastPath = !strings.HasSuffix(kind, "row reader")
				dir := t.TempDir()
				data := filepath.Join(dir, "ds")
				for i, obs := range [][]schema.Observation{first, second} {
					var err error
					on := func(o *Options) { o.AnnouncedPeers = tc.on[i] }
					if !strings.HasPrefix(kind, "arrow") {
						_, err = run(t, data, on, writeObs(t, dir, obs))
					} else {
						var buf bytes.Buffer
						w, _ := rowio.Create[schema.Observation]("-", &buf)
						w.Write(obs)
						w.Close()
						_, err = run(t, data, func(o *Options) { on(o); o.Stdin = &buf }, "-")
					}
					if err != nil {
						t.Fatal(err)
					}
					want := tc.want[i]
					st := readState(t, data)
					for _, h := range []schema.Hash{a, b, c, d, e} {
						if got := st[h].Peers; !slices.Equal(got, want[h]) {
							t.Errorf("run %d: %x: peers %q, want %q", i+1, h[:2], got, want[h])
						}
						if got := st[h].PeersAt; got != tc.at[i][h] {
							t.Errorf("run %d: %x: peers_at %d, want %d", i+1, h[:2], got, tc.at[i][h])
						}
					}
				}
			})
		}
	}
}

// TestMergePeers: the batch's endpoints come first, then those known
// before that the batch did not name, up to the bound.
func TestMergePeers(t *testing.T) {
	for _, tt := range []struct {
		name             string
		fresh, old, want []string
	}{
		{"none fresh", nil, []string{"a"}, []string{"a"}},
		{"none known", []string{"a", "b"}, nil, []string{"a", "b"}},
		{"known again", []string{"b", "c"}, []string{"a", "b"}, []string{"b", "c", "a"}},
		{"bound", []string{"1", "2", "3", "4", "5", "6"}, []string{"a", "b", "c", "d"}, []string{"1", "2", "3", "4", "5", "6", "a", "b"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := mergePeers(tt.fresh, tt.old); !slices.Equal(got, tt.want) {
				t.Errorf("mergePeers(%q, %q) = %q, want %q", tt.fresh, tt.old, got, tt.want)
			}
		})
	}
}

// FuzzPeerEndpoint: whatever node_addr holds, peerEndpoint either refuses
// it or returns a dialable endpoint with the announced port whose text
// parses back to it, and packing it into a record and rendering it back
// gives that text.
func FuzzPeerEndpoint(f *testing.F) {
	for _, s := range []string{"1.2.3.4:5", "[2001:db8::1]:5", "[::ffff:3.3.3.3]:5", "0.0.0.0:1", "224.0.0.1:1",
		"255.255.255.255:1", "[fe80::1%eth0]:5", "x", "", "1.2.3.4", ":5"} {
		f.Add([]byte(s), int32(6881))
	}
	f.Fuzz(func(t *testing.T, addr []byte, port int32) {
		ap, ok := peerEndpoint(addr, port)
		if !ok {
			return
		}
		if int32(ap.Port()) != port || !ap.Addr().IsValid() || ap.Addr().IsUnspecified() || ap.Addr().IsMulticast() || ap.Addr().Zone() != "" {
			t.Fatalf("%q port %d: endpoint %v", addr, port, ap)
		}
		back, err := netip.ParseAddrPort(ap.String())
		if err != nil || back != ap {
			t.Fatalf("%q: %v does not parse back: %v, %v", addr, ap, back, err)
		}
		b := newBatch(3600_000)
		defer b.release()
		e := b.endpointOf(ap)
		p := newPeerRec(0, e, 0)
		if got := string(b.appendPeer(nil, p)); got != ap.String() {
			t.Fatalf("%q: packed and rendered %q, want %q", addr, got, ap.String())
		}
	})
}

// TestAnnouncedPeersUnusualLayout: an input the column reader does not
// take (hash_type BIGINT, as DuckDB writes an untyped integer) is read row
// by row, its announced endpoints too, also from a peer_port BIGINT, read
// by value (TestParquetPeerPortTypes), which was neither read nor refused.
func TestAnnouncedPeersUnusualLayout(t *testing.T) {
	type bigType struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		HashType   int64       `parquet:"hash_type"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		Source     string      `parquet:"source"`
		NodeAddr   string      `parquet:"node_addr,optional"`
		PeerPort   int32       `parquet:"peer_port,optional"`
	}
	type bigPort struct {
		InfoHash   schema.Hash `parquet:"info_hash"`
		HashType   int64       `parquet:"hash_type"`
		ObservedAt int64       `parquet:"observed_at,timestamp(millisecond)"`
		Source     string      `parquet:"source"`
		NodeAddr   string      `parquet:"node_addr,optional"`
		PeerPort   int64       `parquet:"peer_port,optional"`
	}
	a, b := schema.Hash{0x10, 1}, schema.Hash{0x20, 2}
	var big []bigType
	var port []bigPort
	for k := range 3 * readBatch { // rows past the first read, peers among them
		ms := t0.UnixMilli() + int64(k)
		h, src, addr, p := a, schema.SourceGetPeers, "9.9.9.9:1", int32(0)
		switch {
		case k == readBatch+5:
			src, addr, p = schema.SourceAnnouncePeer, "1.1.1.1:5000", 6881
		case k == 2*readBatch+7:
			src, addr, p = schema.SourceAnnouncePeer, "[2001:db8::1]:5", 443
		case k == 2*readBatch+8:
			h, src, addr, p = b, schema.SourceAnnouncePeer, "2.2.2.2:1", 80
		case k == 2*readBatch+9:
			h, src, addr, p = b, schema.SourceAnnouncePeer, "", 80 // no address (null)
		}
		big = append(big, bigType{InfoHash: h, HashType: 1, ObservedAt: ms, Source: src, NodeAddr: addr, PeerPort: p})
		port = append(port, bigPort{InfoHash: h, HashType: 1, ObservedAt: ms, Source: src, NodeAddr: addr, PeerPort: int64(p)})
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		path string
		want map[schema.Hash][]string
	}{
		{"hash_type BIGINT", writeRows(t, filepath.Join(dir, "big.parquet"), big),
			map[schema.Hash][]string{a: {"[2001:db8::1]:443", "1.1.1.1:6881"}, b: {"2.2.2.2:80"}}},
		{"peer_port BIGINT too", writeRows(t, filepath.Join(dir, "port.parquet"), port),
			map[schema.Hash][]string{a: {"[2001:db8::1]:443", "1.1.1.1:6881"}, b: {"2.2.2.2:80"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fast := fastLayoutOf(t, tc.path)
			if fast {
				t.Fatal("the column reader takes the layout: this tests the row reader")
			}
			data := filepath.Join(t.TempDir(), "ds")
			if _, err := run(t, data, func(o *Options) { o.AnnouncedPeers = true }, tc.path); err != nil {
				t.Fatal(err)
			}
			state := readState(t, data)
			for _, h := range []schema.Hash{a, b} {
				if got := state[h].Peers; !slices.Equal(got, tc.want[h]) {
					t.Errorf("%x: peers %q, want %q", h[:2], got, tc.want[h])
				}
			}
		})
	}
}

// TestPeerColumnsPagesChecked: with announced peers kept, node_addr's and
// peer_port's page headers are checked against the reading limits before
// anything is decoded, as the other columns' are (a node_addr page that
// claims more values than its row group has rows is bad input, said so);
// without, those columns are not read and the same file is applied.
func TestPeerColumnsPagesChecked(t *testing.T) {
	p := badNodeAddrPage(t, t.TempDir())
	for _, peers := range []bool{true, false} {
		t.Run(fmt.Sprintf("announced peers %v", peers), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			_, err := run(t, data, func(o *Options) { o.AnnouncedPeers = peers }, p)
			want := `column "node_addr": pages hold more values than the row group's 1000 rows`
			if peers && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Fatalf("err = %v, want %q", err, want)
			}
			if !peers && err != nil {
				t.Fatalf("without peers, node_addr is not read: %v", err)
			}
		})
	}
}

// badNodeAddrPage writes into dir a capture-layout file of 1000
// announce_peer rows whose first node_addr page claims 500 more values
// than its row group's rows, and returns its path.
func badNodeAddrPage(t *testing.T, dir string) string {
	t.Helper()
	const rows = 1000
	obs := make([]schema.Observation, rows)
	for i := range obs {
		obs[i] = announce(schema.Hash{byte(i), 1}, fmt.Sprintf("10.0.%d.%d:1", i/256, i%256), 6881, int64(i))
	}
	p := writeRows(t, filepath.Join(dir, "obs.parquet"), obs)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if _, fast := fastLayout(pf); !fast {
		t.Fatal("capture's layout does not take the column reader")
	}
	// The first data page of node_addr: its DataPageHeader's num_values
	// (field 1, i32: 0x15, then zigzag varint) from rows to rows+500, the
	// same length of varint.
	md := pf.Metadata().RowGroups[0].Columns[pf.Root().Column("node_addr").Index()].MetaData
	varint := func(v int64) []byte {
		var out []byte
		for u := uint64(v << 1); ; u >>= 7 {
			if u < 0x80 {
				return append(out, byte(u))
			}
			out = append(out, byte(u)|0x80)
		}
	}
	off := md.DataPageOffset
	at := bytes.Index(raw[off:off+64], append([]byte{0x15}, varint(rows)...))
	if at < 0 || len(varint(rows)) != len(varint(rows+500)) {
		t.Fatalf("setup: no num_values %d in node_addr's first page header", rows)
	}
	copy(raw[off+int64(at)+1:], varint(rows+500))
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
