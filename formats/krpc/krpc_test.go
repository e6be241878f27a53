package krpc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/anacrolix/dht/v2/krpc"
	"github.com/anacrolix/torrent/bencode"
)

var (
	id20 = []byte("abcdefghij0123456789")
	ih20 = []byte("mnopqrstuvwxyz012345")
)

func TestParseQueries(t *testing.T) {
	tests := []struct {
		name   string
		packet []byte
		check  func(t *testing.T, m *Msg)
	}{
		{"get_peers", AppendGetPeers(nil, []byte("aa"), id20, ih20), func(t *testing.T, m *Msg) {
			if string(m.Q) != "get_peers" || !bytes.Equal(m.InfoHash, ih20) || !bytes.Equal(m.ID, id20) || string(m.T) != "aa" {
				t.Fatalf("%+v", m)
			}
		}},
		{"announce_peer", AppendAnnouncePeer(nil, []byte("t1"), id20, ih20, 51413, []byte("tok")), func(t *testing.T, m *Msg) {
			if string(m.Q) != "announce_peer" || !m.HasPort || m.Port != 51413 || string(m.Token) != "tok" {
				t.Fatalf("%+v", m)
			}
		}},
		{"implied port and unknown keys", []byte("d1:ad2:id20:abcdefghij01234567891:xli1ed1:y1:zee12:implied_porti1e9:info_hash20:mnopqrstuvwxyz0123454:porti6881ee1:q13:announce_peer1:t1:x1:v4:LT011:y1:qe"), func(t *testing.T, m *Msg) {
			if !m.ImpliedPort || m.Port != 6881 || string(m.Q) != "announce_peer" {
				t.Fatalf("%+v", m)
			}
		}},
		{"sample_infohashes", AppendSampleInfohashes(nil, []byte("zz"), id20, ih20), func(t *testing.T, m *Msg) {
			if string(m.Q) != "sample_infohashes" || !bytes.Equal(m.Target, ih20) {
				t.Fatalf("%+v", m)
			}
		}},
		{"error", AppendError(nil, []byte("e1"), 204, "Method Unknown"), func(t *testing.T, m *Msg) {
			if m.Y != Error || m.ErrCode != 204 || string(m.ErrMsg) != "Method Unknown" {
				t.Fatalf("%+v", m)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m Msg
			if err := Parse(tc.packet, &m); err != nil {
				t.Fatalf("%q: %v", tc.packet, err)
			}
			tc.check(t, &m)
		})
	}
}

// TestEveryAnacrolixSampleIsRead decodes a BEP 51 reply made by another
// encoder and checks every sample arrives, in order: magnetico's parser
// sliced samples as Samples[i:(i+1)*20] and lost most of them.
func TestEveryAnacrolixSampleIsRead(t *testing.T) {
	var samples []byte
	for i := 0; i < 20; i++ {
		h := bytes.Repeat([]byte{byte(i + 1)}, 20)
		samples = append(samples, h...)
	}
	type ret struct {
		ID       krpc.ID `bencode:"id"`
		Interval int64   `bencode:"interval"`
		Num      int64   `bencode:"num"`
		Samples  []byte  `bencode:"samples"`
	}
	b := bencode.MustMarshal(struct {
		R ret    `bencode:"r"`
		T string `bencode:"t"`
		Y string `bencode:"y"`
	}{ret{Interval: 60, Num: 77, Samples: samples}, "ab", "r"})
	var m Msg
	if err := Parse(b, &m); err != nil {
		t.Fatal(err)
	}
	if !m.HasSamples || m.Num != 77 || m.Interval != 60 || len(m.Samples) != 400 {
		t.Fatalf("%+v", m)
	}
	for i := 0; i < 20; i++ {
		if got := m.Samples[i*20 : (i+1)*20]; got[0] != byte(i+1) || got[19] != byte(i+1) {
			t.Fatalf("sample %d = %x", i, got)
		}
	}
}

func TestReplyRoundTripsThroughAnacrolix(t *testing.T) {
	nodes := bytes.Repeat([]byte{1}, 26*2)
	b := AppendReply(nil, []byte("tt"), Reply{ID: id20, Token: []byte("tok"), Nodes: nodes,
		HasSamples: true, Samples: append(id20, ih20...), Num: 9, Interval: 30}, []byte{127, 0, 0, 1, 0x1a, 0xe1})
	var m krpc.Msg
	if err := bencode.Unmarshal(b, &m); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	if m.Y != "r" || m.T != "tt" || *m.R.Token != "tok" || len(m.R.Nodes) != 2 || *m.R.Num != 9 ||
		*m.R.Interval != 30 || len(*m.R.Samples) != 2 || m.IP.Port != 6881 {
		t.Fatalf("%+v %+v", m, m.R)
	}
	var mine Msg
	if err := Parse(b, &mine); err != nil || len(mine.Samples) != 40 || len(mine.Nodes) != 52 {
		t.Fatalf("%v %+v", err, mine)
	}
}

func TestMalformed(t *testing.T) {
	deep := strings.Repeat("l", 50) + strings.Repeat("e", 50)
	tests := map[string]string{
		"empty":            "",
		"not a dict":       "li1ee",
		"garbage":          "\x00\x01\x02",
		"unterminated":     "d1:t2:aa",
		"no t":             "d1:y1:qe",
		"no y":             "d1:t2:aae",
		"bad y":            "d1:t2:aa1:y1:xe",
		"query no method":  "d1:t2:aa1:y1:qe",
		"short id":         "d1:ad2:id3:abce1:q4:ping1:t2:aa1:y1:qe",
		"string past end":  "d1:t99:aa1:y1:qe",
		"trailing":         "d1:t2:aa1:y1:ree",
		"bad int":          "d1:ad4:porti-0ee1:q4:ping1:t2:aa1:y1:qe",
		"leading zero int": "d1:ad4:porti01ee1:q4:ping1:t2:aa1:y1:qe",
		"huge int":         "d1:ad4:porti99999999999999999999ee1:q4:ping1:t2:aa1:y1:qe",
		"too deep":         "d1:x" + deep + "1:t2:aa1:y1:qe",
		"odd samples":      "d1:rd7:samples3:abce1:t2:aa1:y1:re",
		"non-string key":   "di1ei2ee",
		"leading zero len": "d01:t2:aa1:y1:qe",
	}
	for name, p := range tests {
		t.Run(name, func(t *testing.T) {
			var m Msg
			err := Parse([]byte(p), &m)
			if err == nil || !IsMalformed(err) {
				t.Fatalf("Parse(%q) = %v, want a SyntaxError", p, err)
			}
		})
	}
	var many strings.Builder
	many.WriteString("d1:xl")
	for i := 0; i < 2000; i++ {
		many.WriteString("i1e")
	}
	many.WriteString("e1:t2:aa1:y1:qe")
	var m Msg
	if err := Parse([]byte(many.String()), &m); !IsMalformed(err) {
		t.Fatalf("2000 values: %v, want too many values", err)
	}
}

// FuzzParse checks Parse never panics, and that what it accepts is
// consistent: fixed-size fields have their sizes, and every accepted
// packet also decodes with anacrolix's decoder into a dictionary. (Parse
// tolerates unsorted keys, as DHT nodes in the wild send them; anacrolix
// rejects those, so that one difference is allowed.) Where anacrolix's
// krpc.Msg decodes it too, both read the same fields (checkAnacrolix).
func FuzzParse(f *testing.F) {
	f.Add(AppendGetPeers(nil, []byte("aa"), id20, ih20))
	f.Add(AppendAnnouncePeer(nil, []byte("aa"), id20, ih20, 1, []byte("x")))
	f.Add(AppendReply(nil, []byte("aa"), Reply{ID: id20, HasSamples: true, Samples: ih20, Nodes: bytes.Repeat([]byte{2}, 26)}, nil))
	f.Add(AppendError(nil, []byte("aa"), 204, "x"))
	f.Add([]byte("d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:t2:aa1:y1:qe"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Msg
		if err := Parse(b, &m); err != nil {
			if !IsMalformed(err) {
				t.Fatalf("non-syntax error %v", err)
			}
			return
		}
		for _, f := range [][]byte{m.ID, m.InfoHash, m.Target} {
			if f != nil && len(f) != 20 {
				t.Fatalf("20-byte field of %d bytes", len(f))
			}
		}
		if len(m.Samples)%20 != 0 || len(m.Nodes)%26 != 0 || m.T == nil || m.Y == 0 {
			t.Fatalf("accepted inconsistent %+v", m)
		}
		var v map[string]any
		if err := bencode.Unmarshal(b, &v); err != nil && !strings.Contains(err.Error(), "unsorted") {
			t.Fatalf("Parse accepted %q but bencode says %v", b, err)
		}
		checkAnacrolix(t, b, &m)
	})
}

func BenchmarkParseGetPeers(b *testing.B) {
	p := AppendGetPeers(nil, []byte("aa"), id20, ih20)
	var m Msg
	b.ReportAllocs()
	for b.Loop() {
		if err := Parse(p, &m); err != nil {
			b.Fatal(err)
		}
	}
}
