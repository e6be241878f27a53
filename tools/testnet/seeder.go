package testnet

import (
	"context"
	"fmt"
	"io"

	alog "github.com/anacrolix/log"
	"github.com/anacrolix/torrent"
	"github.com/anacrolix/torrent/metainfo"
	"github.com/anacrolix/torrent/storage"
	"golang.org/x/time/rate"
)

// seeder is an anacrolix/torrent client on 127.0.0.1 that serves the
// metadata of its torrents. Piece data lives nowhere: the no-op storage
// claims every piece is complete and reads zeros.
type seeder struct {
	cl   *torrent.Client
	addr string // "127.0.0.1:port"
}

func newSeeder(dataDir string) (*seeder, error) {
	cfg := torrent.NewDefaultClientConfig()
	cfg.SetListenAddr("127.0.0.1:0")
	cfg.DisableIPv6 = true
	cfg.NoDHT = true
	cfg.DataDir = dataDir
	cfg.DefaultStorage = noopStorage{}
	cfg.Seed = true
	cfg.DisableTrackers = true
	cfg.DisableWebtorrent = true
	cfg.DisableWebseeds = true
	cfg.NoDefaultPortForwarding = true
	cfg.DisableUTP = true
	cfg.DialRateLimiter = rate.NewLimiter(rate.Inf, 0)
	cfg.Logger = alog.Default.FilterLevel(alog.Disabled)
	cl, err := torrent.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("testnet: seeder: %w", err)
	}
	return &seeder{cl: cl, addr: fmt.Sprintf("127.0.0.1:%d", cl.LocalPort())}, nil
}

// add starts seeding t.
func (s *seeder) add(t Torrent) error {
	_, _, err := s.cl.AddTorrentSpec(&torrent.TorrentSpec{AddTorrentOpts: torrent.AddTorrentOpts{
		InfoHash:  t.InfoHash,
		InfoBytes: t.InfoBytes,
	}})
	if err != nil {
		return fmt.Errorf("testnet: seeder %s: adding %x: %w", s.addr, t.InfoHash, err)
	}
	return nil
}

func (s *seeder) close() { s.cl.Close() }

// noopStorage stores nothing and reports every piece complete.
type noopStorage struct{}

func (noopStorage) OpenTorrent(context.Context, *metainfo.Info, metainfo.Hash) (storage.TorrentImpl, error) {
	return storage.TorrentImpl{
		Piece: func(metainfo.Piece) storage.PieceImpl { return noopPiece{} },
		Close: func() error { return nil },
	}, nil
}

type noopPiece struct{}

func (noopPiece) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	return len(p), nil
}
func (noopPiece) WriteAt(p []byte, off int64) (int, error) { return len(p), nil }
func (noopPiece) MarkComplete() error                      { return nil }
func (noopPiece) MarkNotComplete() error                   { return nil }
func (noopPiece) Completion() storage.Completion {
	return storage.Completion{Ok: true, Complete: true}
}

var _ io.ReaderAt = noopPiece{}
