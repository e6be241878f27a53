package schema

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A jobs file (plan-retries' output, fetch's input) carries, besides its
// rows, the endpoints penalised in the dataset's peers table at planning
// time: fetch skips them for every job, not only for the hashes whose
// avoid_peers name them. They travel once per file, as the value of
// AvoidPeersKey in the Parquet file's key-value metadata or in the Arrow
// IPC stream's schema metadata:
//
//	127.0.0.1:6881 1767225600000
//	[::1]:51413 1767229200000
//
// one endpoint per line, then the end of its penalty (UTC milliseconds).
// A file carries at most MaxAvoidPeers endpoints in at most MaxAvoidBytes;
// plan-retries keeps the penalties that last longest.
const (
	AvoidPeersKey    = "infohash.avoid_peers"
	MaxAvoidPeers    = 100_000
	MaxAvoidBytes    = 3 << 20 // under the 4 MiB an Arrow schema message may take
	MaxPeerAddrBytes = 262     // a peer endpoint: a host name (253) with a port
)

// AvoidedPeer is an endpoint skipped until Until (UTC milliseconds).
type AvoidedPeer struct {
	Addr  string
	Until int64
}

// EncodeAvoidPeers renders ps in the jobs file format, keeping ps's order
// and stopping before MaxAvoidPeers entries or MaxAvoidBytes bytes. An
// endpoint DecodeAvoidPeers would refuse (not host:port, or holding a
// space or newline: the peers table takes addresses from results files
// unchecked) is left out, so that the list always decodes. It returns the
// text and how many endpoints it holds.
func EncodeAvoidPeers(ps []AvoidedPeer) (string, int) {
	var b strings.Builder
	n := 0
	for _, p := range ps {
		if !PeerAddrOK(p.Addr) {
			continue
		}
		line := p.Addr + " " + strconv.FormatInt(p.Until, 10) + "\n"
		if n == MaxAvoidPeers || b.Len()+len(line) > MaxAvoidBytes {
			break
		}
		b.WriteString(line)
		n++
	}
	return b.String(), n
}

// DecodeAvoidPeers parses a jobs file's avoid list. It refuses text over
// the limits and lines that are not an endpoint (host:port) and a time,
// naming the line.
func DecodeAvoidPeers(s string) ([]AvoidedPeer, error) {
	if len(s) > MaxAvoidBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", AvoidPeersKey, len(s), MaxAvoidBytes)
	}
	data := []byte(s)
	var out []AvoidedPeer
	for line := 1; len(data) > 0; line++ {
		l, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		if len(out) == MaxAvoidPeers {
			return nil, fmt.Errorf("%s: more than %d endpoints", AvoidPeersKey, MaxAvoidPeers)
		}
		addr, until, ok := bytes.Cut(l, []byte{' '})
		if !ok || len(addr) > MaxPeerAddrBytes {
			return nil, fmt.Errorf("%s: line %d: want ENDPOINT UNTIL_MS", AvoidPeersKey, line)
		}
		if !PeerAddrOK(string(addr)) {
			return nil, fmt.Errorf("%s: line %d: %q is not host:port", AvoidPeersKey, line, addr)
		}
		t, err := strconv.ParseInt(string(until), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %q is not a time in milliseconds", AvoidPeersKey, line, until)
		}
		out = append(out, AvoidedPeer{Addr: string(addr), Until: t})
	}
	return out, nil
}

// PeerAddrOK reports whether addr can be a peer endpoint as the dataset
// records it (peer_failures, the peers table, avoid lists): host:port with
// a port, at most 262 bytes (a host name with a port), valid UTF-8 (it is
// written into STRING columns: the peers table's addr, avoid_peers,
// served_by), and no space or newline (which end an endpoint and a line
// of an avoid list).
func PeerAddrOK(addr string) bool {
	if len(addr) > MaxPeerAddrBytes || strings.ContainsAny(addr, " \n") || !utf8.ValidString(addr) {
		return false
	}
	_, port, err := net.SplitHostPort(addr)
	return err == nil && port != ""
}
