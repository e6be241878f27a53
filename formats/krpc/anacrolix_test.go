package krpc

import (
	"bytes"
	"testing"

	dhtkrpc "github.com/anacrolix/dht/v2/krpc"
	"github.com/anacrolix/torrent/bencode"
)

// checkAnacrolix fails t when anacrolix's krpc.Msg, the DHT library's
// own decoding of a packet b that Parse accepted as m, reads another
// value of a field both keep: t, y, q and ro; a query's id, info_hash,
// target, token, port and implied_port; a response's id, token,
// interval, num and samples; an error's code and message. A packet with
// both "a" and "r" is left out (Parse keeps one set of fields for
// both), as is one anacrolix refuses (unsorted keys, a field of another
// type than its struct's: it refuses more).
func checkAnacrolix(t *testing.T, b []byte, m *Msg) {
	t.Helper()
	var am dhtkrpc.Msg
	if !unmarshalAnacrolix(b, &am) || (am.A != nil && am.R != nil) {
		return
	}
	fail := func(what string, got, want any) {
		t.Helper()
		t.Fatalf("%s: Parse %q, anacrolix %q, in %q", what, got, want, b)
	}
	switch {
	case string(m.T) != am.T:
		fail("t", m.T, am.T)
	case string(m.Y) != am.Y:
		fail("y", string(m.Y), am.Y)
	case string(m.Q) != am.Q:
		fail("q", m.Q, am.Q)
	case m.RO != am.ReadOnly:
		fail("ro", m.RO, am.ReadOnly)
	}
	id := func(what string, got []byte, want dhtkrpc.ID) {
		t.Helper()
		if got != nil && !bytes.Equal(got, want[:]) || got == nil && want != (dhtkrpc.ID{}) {
			fail(what, got, want[:])
		}
	}
	if a := am.A; a != nil {
		id("a.id", m.ID, a.ID)
		id("a.info_hash", m.InfoHash, a.InfoHash)
		id("a.target", m.Target, a.Target)
		switch {
		case string(m.Token) != a.Token:
			fail("a.token", m.Token, a.Token)
		case m.HasPort != (a.Port != nil) || a.Port != nil && m.Port != int64(*a.Port):
			fail("a.port", m.Port, a.Port)
		case m.ImpliedPort != a.ImpliedPort:
			fail("a.implied_port", m.ImpliedPort, a.ImpliedPort)
		}
	}
	if r := am.R; r != nil {
		id("r.id", m.ID, r.ID)
		switch {
		case r.Token != nil && string(m.Token) != *r.Token || r.Token == nil && m.Token != nil:
			fail("r.token", m.Token, r.Token)
		case m.HasInterval != (r.Interval != nil) || r.Interval != nil && m.Interval != *r.Interval:
			fail("r.interval", m.Interval, r.Interval)
		case r.Num != nil && m.Num != *r.Num:
			fail("r.num", m.Num, *r.Num)
		case m.HasSamples != (r.Samples != nil) || r.Samples != nil && len(m.Samples) != 20*len(*r.Samples):
			fail("r.samples", m.Samples, r.Samples)
		}
	}
	if e := am.E; e != nil && (m.ErrCode != int64(e.Code) || string(m.ErrMsg) != e.Msg) {
		fail("e", []any{m.ErrCode, m.ErrMsg}, []any{e.Code, e.Msg})
	}
}

// unmarshalAnacrolix decodes b with anacrolix's decoder, reporting
// whether it took it; a panic in the library (not ours to fix) is a
// refusal.
func unmarshalAnacrolix(b []byte, am *dhtkrpc.Msg) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return bencode.Unmarshal(b, am) == nil
}

// TestAnacrolixReads: anacrolix decodes the packets we send, so that
// checkAnacrolix compares them rather than skipping every one.
func TestAnacrolixReads(t *testing.T) {
	for name, b := range map[string][]byte{
		"get_peers":      AppendGetPeers(nil, []byte("aa"), id20, ih20),
		"announce_peer":  AppendAnnouncePeer(nil, []byte("aa"), id20, ih20, 6881, []byte("tok")),
		"samples reply":  AppendReply(nil, []byte("aa"), Reply{ID: id20, HasSamples: true, Interval: 5, Num: 9, Samples: ih20, Token: []byte("k")}, nil),
		"nodes reply":    AppendReply(nil, []byte("aa"), Reply{ID: id20, Nodes: bytes.Repeat([]byte{2}, 26)}, nil),
		"error":          AppendError(nil, []byte("aa"), 204, "x"),
		"read-only ping": []byte("d1:ad2:id20:abcdefghij0123456789e1:q4:ping2:roi1e1:t2:aa1:y1:qe"),
	} {
		t.Run(name, func(t *testing.T) {
			var am dhtkrpc.Msg
			if !unmarshalAnacrolix(b, &am) {
				t.Fatalf("anacrolix refuses %q", b)
			}
			var m Msg
			if err := Parse(b, &m); err != nil {
				t.Fatal(err)
			}
			checkAnacrolix(t, b, &m)
		})
	}
}
