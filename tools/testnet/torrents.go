package testnet

import (
	"crypto/sha1"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/anacrolix/torrent/bencode"
	"github.com/anacrolix/torrent/metainfo"
)

// Torrent is one generated torrent and where the testnet made it
// available.
type Torrent struct {
	InfoHash  [20]byte
	InfoBytes []byte // the bencoded info dictionary; SHA-1 is InfoHash
	Info      metainfo.Info
	Seeders   []string // "127.0.0.1:port" of the peers that seed (or seeded) it
	Dead      bool     // announced once, then every peer went away
}

// MetaInfo returns a .torrent for t.
func (t Torrent) MetaInfo() metainfo.MetaInfo {
	return metainfo.MetaInfo{InfoBytes: t.InfoBytes}
}

// Hex is the lowercase hex infohash.
func (t Torrent) Hex() string { return fmt.Sprintf("%x", t.InfoHash) }

var words = []string{
	"Ubuntu", "Debian", "archive", "lecture", "notes", "Über", "Straße", "música",
	"canción", "東京", "日本語", "서울", "音楽", "видео", "Москва", "Ελληνικά",
	"données", "été", "naïve", "café", "dataset", "backup", "2024", "raw",
	"सिनेमा", "عربي", "עברית", "ñandú", "smörgåsbord", "Łódź", "İstanbul", "🎵",
}

var exts = []string{".mkv", ".mp4", ".flac", ".mp3", ".iso", ".pdf", ".txt", ".srt", ".jpg", ".zip", ".epub"}

func phrase(rng *rand.Rand, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[rng.IntN(len(words))]
	}
	return strings.Join(parts, " ")
}

// genTorrent makes the i-th torrent deterministically from rng. Every
// fifth one has enough pieces that its info dictionary exceeds 16 KiB, so
// BEP 9 sends it in several pieces; every third one is single-file.
func genTorrent(rng *rand.Rand, i int) (Torrent, error) {
	info := metainfo.Info{Name: fmt.Sprintf("%s %03d", phrase(rng, 1+rng.IntN(3)), i)}
	info.PieceLength = int64(16<<10) << rng.IntN(8) // 16 KiB .. 2 MiB
	var total int64
	if i%3 == 0 {
		info.Name += exts[rng.IntN(len(exts))]
		info.Length = 1 + rng.Int64N(info.PieceLength*200)
		total = info.Length
	} else {
		nfiles := 2 + rng.IntN(12)
		seen := map[string]bool{}
		for f := 0; f < nfiles; f++ {
			depth := rng.IntN(3)
			path := make([]string, 0, depth+1)
			for d := 0; d < depth; d++ {
				path = append(path, phrase(rng, 1+rng.IntN(2)))
			}
			path = append(path, fmt.Sprintf("%s %02d%s", phrase(rng, 2), f, exts[rng.IntN(len(exts))]))
			key := strings.Join(path, "/")
			if seen[key] {
				continue
			}
			seen[key] = true
			length := 1 + rng.Int64N(info.PieceLength*20)
			info.Files = append(info.Files, metainfo.FileInfo{Length: length, Path: path})
			total += length
		}
	}
	if i%5 == 4 {
		// Many pieces: 1000..1500 piece hashes = 20..30 KB of info.
		info.PieceLength = 16 << 10
		target := int64(1000+rng.IntN(500)) * info.PieceLength
		if info.Length == 0 && target <= total {
			// Shrink the files first: adding a negative extra to the
			// first file could make its length negative (invalid).
			for k := range info.Files {
				info.Files[k].Length = 1
			}
			total = int64(len(info.Files))
		}
		extra := target - total
		if info.Length > 0 {
			info.Length += extra
		} else {
			info.Files[0].Length += extra
		}
		total += extra
	}
	npieces := (total + info.PieceLength - 1) / info.PieceLength
	info.Pieces = make([]byte, 20*npieces)
	for j := range info.Pieces {
		info.Pieces[j] = byte(rng.Uint32())
	}
	b, err := bencode.Marshal(info)
	if err != nil {
		return Torrent{}, fmt.Errorf("testnet: encoding torrent %d: %w", i, err)
	}
	return Torrent{InfoHash: sha1.Sum(b), InfoBytes: b, Info: info}, nil
}
