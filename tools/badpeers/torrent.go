package badpeers

import (
	"crypto/sha1"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

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
	return newTorrent(seed, files, pieceCount, false)
}

// NewHybridTorrent is NewTorrent's torrent made hybrid (BEP 52): its info
// dictionary also holds meta version 2 and a file tree of the same files,
// so that both its SHA-1 (InfoHash) and its SHA-256 (V2) are infohashes
// of it. Its "files" list holds them in the file tree's order with BEP 47
// pad files between them, aligning each to a piece as BEP 52 does (fetch
// refuses a hybrid whose two views differ). Its piece hashes and pieces
// roots are random, as NewTorrent's: fetch checks neither.
func NewHybridTorrent(seed uint64, files, pieceCount int) Torrent {
	return newTorrent(seed, files, pieceCount, true)
}

// V2 is t under its v2 infohash, the first 20 bytes of the SHA-256 of its
// info dictionary, and that full hash. Only a v2 or hybrid dictionary
// (NewHybridTorrent) is a v2 torrent: fetch refuses another's metadata
// for that hash as invalid_metadata.
func (t Torrent) V2() (Torrent, [32]byte) {
	sum := sha256.Sum256(t.Info)
	v2 := Torrent{Info: t.Info, Name: t.Name}
	copy(v2.InfoHash[:], sum[:20])
	return v2, sum
}

func newTorrent(seed uint64, files, pieceCount int, hybrid bool) Torrent {
	rng := rand.New(rand.NewPCG(seed, 7))
	name := fmt.Sprintf("badpeers-%d", seed)
	fl := make([]any, files)
	tree := map[string]any{}
	for i := range fl {
		n, file := rng.Int64N(1<<30), fmt.Sprintf("file-%d.bin", i)
		fl[i] = map[string]any{"length": n, "path": []string{"dir", file}}
		tree[file] = map[string]any{"": map[string]any{"length": n, "pieces root": make([]byte, 32)}}
	}
	pieces := make([]byte, 20*pieceCount)
	for i := range pieces {
		pieces[i] = byte(rng.Uint32())
	}
	dict := map[string]any{"files": fl, "name": name, "piece length": 16384, "pieces": pieces}
	if hybrid {
		dict["meta version"], dict["file tree"] = 2, map[string]any{"dir": tree}
		dict["files"] = padded(fl, 16384)
	}
	info := bencode.MustMarshal(dict)
	return Torrent{InfoHash: sha1.Sum(info), Info: info, Name: name}
}

// padded is a hybrid's "files" list of fl: its files in the file tree's
// order (by name) and, after each file but the last, a BEP 47 pad file
// up to the next piece boundary (none when the file ends on one).
func padded(fl []any, plen int64) []any {
	files := slices.Clone(fl)
	path := func(f any) string { return f.(map[string]any)["path"].([]string)[1] }
	slices.SortFunc(files, func(a, b any) int { return strings.Compare(path(a), path(b)) })
	out := make([]any, 0, 2*len(files))
	var end int64
	for i, f := range files {
		out = append(out, f)
		end += f.(map[string]any)["length"].(int64)
		if gap := (plen - end%plen) % plen; gap > 0 && i < len(files)-1 {
			out = append(out, map[string]any{"attr": "p", "length": gap, "path": []string{".pad", strconv.FormatInt(gap, 10)}})
			end += gap
		}
	}
	return out
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
