// Package loadgen sends valid KRPC get_peers and announce_peer queries to
// one DHT node at a steady rate, for capture's throughput benchmark. Each
// query names a distinct infohash, so the receiver's recorded count can be
// compared with Result.Sent to measure loss.
package loadgen

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/net/ipv4"

	"github.com/infohash/infohash/formats/krpc"
)

// Config describes one load run.
type Config struct {
	Target   string        // the node under test, "127.0.0.1:port"
	Rate     float64       // queries per second
	Count    int64         // stop after this many (0: Duration decides)
	Duration time.Duration // stop after this long (0: Count decides)
	Senders  int           // source sockets (default 4)
	// AnnounceEvery makes every n-th query an announce_peer (0: never).
	AnnounceEvery int
	Seed          uint64 // varies the infohashes between runs
}

// Result counts what was sent.
type Result struct {
	Sent      int64         `json:"sent"`
	Setup     int64         `json:"setup_queries"` // the get_peers that fetched the token, on top of Sent
	GetPeers  int64         `json:"get_peers"`
	Announces int64         `json:"announce_peer"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	Rate      float64       `json:"rate"` // achieved queries/s
}

// tick is the pacing period: each tick sends Rate*tick queries in
// sendmmsg batches.
const tick = time.Millisecond

// Run sends the load and returns when Count or Duration is reached or
// ctx ends.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Rate <= 0 || (cfg.Count <= 0 && cfg.Duration <= 0) {
		return Result{}, errors.New("loadgen: need a rate and a count or duration")
	}
	if cfg.Senders <= 0 {
		cfg.Senders = 4
	}
	ua, err := net.ResolveUDPAddr("udp4", cfg.Target)
	if err != nil {
		return Result{}, fmt.Errorf("loadgen: target %q: %w", cfg.Target, err)
	}
	var conns []*net.UDPConn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range cfg.Senders {
		c, err := net.DialUDP("udp4", nil, ua)
		if err != nil {
			return Result{}, fmt.Errorf("loadgen: %w", err)
		}
		c.SetWriteBuffer(4 << 20)
		conns = append(conns, c)
	}
	var (
		token []byte
		setup int64
	)
	if cfg.AnnounceEvery > 0 {
		if token, err = getToken(conns[0]); err != nil {
			return Result{}, err
		}
		setup = 1
	}
	g := gen{cfg: cfg, token: token}
	pcs := make([]*ipv4.PacketConn, len(conns))
	for i, c := range conns {
		pcs[i] = ipv4.NewPacketConn(c)
	}
	msgs := make([]ipv4.Message, 64)
	bufs := make([][]byte, 64)
	for i := range msgs {
		bufs[i] = make([]byte, 0, 256)
		msgs[i].Buffers = [][]byte{nil}
	}
	start := time.Now()
	t := time.NewTicker(tick)
	defer t.Stop()
	res := Result{Setup: setup}
	turn := 0
	for {
		elapsed := time.Since(start)
		want := int64(cfg.Rate * elapsed.Seconds())
		if cfg.Count > 0 {
			want = min(want, cfg.Count)
		}
		for res.Sent < want {
			n := int(min(want-res.Sent, int64(len(msgs))))
			for i := range n {
				bufs[i] = g.next(bufs[i][:0], res.Sent+int64(i), &res)
				msgs[i].Buffers[0] = bufs[i]
			}
			pc := pcs[turn%len(pcs)]
			turn++
			sent, err := pc.WriteBatch(msgs[:n], 0)
			if err != nil && sent == 0 {
				return res, fmt.Errorf("loadgen: sending to %s: %w", cfg.Target, err)
			}
			res.Sent += int64(sent)
		}
		if (cfg.Count > 0 && res.Sent >= cfg.Count) || (cfg.Duration > 0 && elapsed >= cfg.Duration) {
			break
		}
		select {
		case <-ctx.Done():
			res.Elapsed = time.Since(start)
			return res, ctx.Err()
		case <-t.C:
		}
	}
	res.Elapsed = time.Since(start)
	res.Rate = float64(res.Sent) / res.Elapsed.Seconds()
	return res, nil
}

// gen makes the i-th query.
type gen struct {
	cfg   Config
	token []byte
}

// Hash returns the infohash of query i for seed: what the receiver must
// record.
func Hash(seed uint64, i int64) [20]byte {
	var h [20]byte
	copy(h[:4], "LOAD")
	binary.BigEndian.PutUint64(h[4:], seed)
	binary.BigEndian.PutUint64(h[12:], uint64(i))
	return h
}

func (g *gen) next(dst []byte, i int64, res *Result) []byte {
	h := Hash(g.cfg.Seed, i)
	var id [20]byte
	copy(id[:], "loadgen-node-")
	binary.BigEndian.PutUint32(id[16:], uint32(i))
	var t [4]byte
	binary.BigEndian.PutUint32(t[:], uint32(i))
	if g.cfg.AnnounceEvery > 0 && i%int64(g.cfg.AnnounceEvery) == 0 {
		res.Announces++
		return krpc.AppendAnnouncePeer(dst, t[:], id[:], h[:], 6881+int(i%1000), g.token)
	}
	res.GetPeers++
	return krpc.AppendGetPeers(dst, t[:], id[:], h[:])
}

// getToken asks the target for an announce token (get_peers); it is
// valid for every socket on this IP.
func getToken(c *net.UDPConn) ([]byte, error) {
	id := []byte("loadgen-token-query!")
	if _, err := c.Write(krpc.AppendGetPeers(nil, []byte("tk"), id, id)); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	buf := make([]byte, 1<<16)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	for {
		n, err := c.Read(buf)
		if err != nil {
			return nil, fmt.Errorf("loadgen: no token from %s: %w", c.RemoteAddr(), err)
		}
		var m krpc.Msg
		if krpc.Parse(buf[:n], &m) == nil && string(m.T) == "tk" && len(m.Token) > 0 {
			return append([]byte(nil), m.Token...), nil
		}
	}
}
