package badpeers

import (
	"crypto/sha1"
	"fmt"
	"math/rand/v2"

	"github.com/anacrolix/torrent/bencode"

	ibencode "github.com/infohash/infohash/formats/bencode"
)

// Torrent is an info dictionary and its v1 infohash.
type Torrent struct {
	InfoHash [20]byte
	Info     []byte // bencoded info dictionary; SHA-1 is InfoHash
	Name     string
}

// NewTorrent makes a valid multi-file torrent from seed: files files of
// random sizes and one piece hash per 16 KiB piece, so that pieceCount
// controls the metadata size (about 20 bytes per piece; above 820 pieces
// the metadata spans several 16 KiB BEP 9 pieces).
func NewTorrent(seed uint64, files, pieceCount int) Torrent {
	rng := rand.New(rand.NewPCG(seed, 7))
	name := fmt.Sprintf("badpeers-%d", seed)
	fl := make([]any, files)
	for i := range fl {
		fl[i] = map[string]any{
			"length": rng.Int64N(1 << 30),
			"path":   []string{"dir", fmt.Sprintf("file-%d.bin", i)},
		}
	}
	pieces := make([]byte, 20*pieceCount)
	for i := range pieces {
		pieces[i] = byte(rng.Uint32())
	}
	info := bencode.MustMarshal(map[string]any{
		"files": fl, "name": name, "piece length": 16384, "pieces": pieces,
	})
	return Torrent{InfoHash: sha1.Sum(info), Info: info, Name: name}
}

// InvalidTorrent is a torrent whose info dictionary hashes correctly but
// describes no files (no length, files or file tree): fetching it from a
// Good peer ends invalid_metadata.
func InvalidTorrent(seed uint64) Torrent {
	name := fmt.Sprintf("badpeers-invalid-%d", seed)
	info := bencode.MustMarshal(map[string]any{"name": name, "piece length": 16384})
	return Torrent{InfoHash: sha1.Sum(info), Info: info, Name: name}
}

// RepeatedKeyTorrent is a torrent whose info dictionary hashes correctly
// but holds its "name" key twice, with two different names (a reader
// keeping the first disagrees with one keeping the last): fetching it
// from a Good peer ends invalid_metadata. Name is the second name.
func RepeatedKeyTorrent(seed uint64) Torrent {
	name := fmt.Sprintf("badpeers-repeated-%d", seed)
	var e ibencode.Encoder
	e.Dict().Str("length").Int(1).Str("name").Str("first-" + name).Str("name").Str(name).
		Str("piece length").Int(16384).Str("pieces").Bytes(make([]byte, 20)).End()
	return Torrent{InfoHash: sha1.Sum(e.B), Info: e.B, Name: name}
}
