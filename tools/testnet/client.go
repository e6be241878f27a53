package testnet

import (
	"context"
	"fmt"
	"net"

	"github.com/anacrolix/dht/v2"
	alog "github.com/anacrolix/log"
	"golang.org/x/time/rate"
)

// Client starts an outside DHT node on 127.0.0.1, as a crawler or fetch
// runs one: bootstrapped from the testnet's nodes (StartingNodes), its
// own send limiter (dht's default is one for the whole process), its
// logs off. It is closed with the testnet (Close), whether or not it
// bootstrapped.
func (n *Net) Client(ctx context.Context) (*dht.Server, error) {
	conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("testnet: client: listening: %w", err)
	}
	cfg := dht.NewDefaultServerConfig()
	cfg.Conn = conn
	cfg.SendLimiter = rate.NewLimiter(rate.Inf, 0)
	cfg.Logger = alog.Default.FilterLevel(alog.Disabled)
	cfg.StartingNodes = n.StartingNodes
	s, err := dht.NewServer(cfg)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("testnet: client on %s: %w", conn.LocalAddr(), err)
	}
	n.mu.Lock()
	if err := n.ctx.Err(); err != nil { // Close has begun (it cancels first)
		n.mu.Unlock()
		s.Close()
		return nil, fmt.Errorf("testnet: client: the testnet is closed: %w", err)
	}
	n.clients = append(n.clients, s)
	n.mu.Unlock()
	if _, err := s.BootstrapContext(ctx); err != nil {
		return nil, fmt.Errorf("testnet: client on %s: bootstrapping: %w", conn.LocalAddr(), err)
	}
	return s, nil
}
