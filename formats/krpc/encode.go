package krpc

import "github.com/infohash/infohash/formats/bencode"

// Error codes (BEP 5).
const (
	ErrGeneric       = 201
	ErrServer        = 202
	ErrProtocol      = 203
	ErrMethodUnknown = 204
)

// AppendQuery appends a query with method q and transaction t; args
// writes the body of the argument dictionary, keys sorted ("id" first).
func AppendQuery(dst []byte, t []byte, q string, args func(e *bencode.Encoder)) []byte {
	e := bencode.Encoder{B: dst}
	e.Dict().Str("a").Dict()
	args(&e)
	e.End()
	e.Str("q").Str(q).Str("t").Bytes(t).Str("y").Str("q").End()
	return e.B
}

// AppendGetPeers appends a get_peers query.
func AppendGetPeers(dst, t, id, infoHash []byte) []byte {
	return AppendQuery(dst, t, "get_peers", func(e *bencode.Encoder) {
		e.Str("id").Bytes(id).Str("info_hash").Bytes(infoHash)
	})
}

// AppendAnnouncePeer appends an announce_peer query for port.
func AppendAnnouncePeer(dst, t, id, infoHash []byte, port int, token []byte) []byte {
	return AppendQuery(dst, t, "announce_peer", func(e *bencode.Encoder) {
		e.Str("id").Bytes(id).Str("info_hash").Bytes(infoHash).
			Str("port").Int(int64(port)).Str("token").Bytes(token)
	})
}

// AppendSampleInfohashes appends a BEP 51 sample_infohashes query.
func AppendSampleInfohashes(dst, t, id, target []byte) []byte {
	return AppendQuery(dst, t, "sample_infohashes", func(e *bencode.Encoder) {
		e.Str("id").Bytes(id).Str("target").Bytes(target)
	})
}

// AppendFindNode appends a find_node query.
func AppendFindNode(dst, t, id, target []byte) []byte {
	return AppendQuery(dst, t, "find_node", func(e *bencode.Encoder) {
		e.Str("id").Bytes(id).Str("target").Bytes(target)
	})
}

// AppendPing appends a ping query.
func AppendPing(dst, t, id []byte) []byte {
	return AppendQuery(dst, t, "ping", func(e *bencode.Encoder) { e.Str("id").Bytes(id) })
}

// Reply is the content of a response; empty fields are left out except
// ID. Samples, when HasSamples, is always written (BEP 51 says so even
// when empty); so is Nodes when HasNodes (BEP 5: a find_node response
// has "nodes", a get_peers one "values" or "nodes"; an empty routing
// table gives "nodes" "", as libtorrent writes it).
type Reply struct {
	ID         []byte
	Interval   int64
	HasNodes   bool
	Nodes      []byte
	Num        int64
	HasSamples bool
	Samples    []byte
	Token      []byte
	Values     []byte // compact peer addresses, 6 bytes each: a list of strings
}

// AppendReply appends a response to transaction t. ip, when 6 bytes, is
// the querier's compact address (BEP 42 "ip" key).
func AppendReply(dst, t []byte, r Reply, ip []byte) []byte {
	e := bencode.Encoder{B: dst}
	e.Dict()
	if len(ip) == 6 {
		e.Str("ip").Bytes(ip)
	}
	e.Str("r").Dict().Str("id").Bytes(r.ID)
	if r.HasSamples {
		e.Str("interval").Int(r.Interval)
	}
	if r.HasNodes || len(r.Nodes) > 0 {
		e.Str("nodes").Bytes(r.Nodes)
	}
	if r.HasSamples {
		e.Str("num").Int(r.Num).Str("samples").Bytes(r.Samples)
	}
	if len(r.Token) > 0 {
		e.Str("token").Bytes(r.Token)
	}
	if len(r.Values) > 0 {
		e.Str("values").List()
		for i := 0; i+6 <= len(r.Values); i += 6 {
			e.Bytes(r.Values[i : i+6])
		}
		e.End()
	}
	e.End().Str("t").Bytes(t).Str("y").Str("r").End()
	return e.B
}

// AppendError appends an error response.
func AppendError(dst, t []byte, code int64, msg string) []byte {
	e := bencode.Encoder{B: dst}
	e.Dict().Str("e").List().Int(code).Str(msg).End().
		Str("t").Bytes(t).Str("y").Str("e").End()
	return e.B
}
