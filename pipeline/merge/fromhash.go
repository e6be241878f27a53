package merge

import (
	"bytes"
	"crypto/sha256"
	"fmt"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// checkTorrentHash refuses row n (counted from 1) of the other dataset's
// torrents file path (merge --from) when its info_bytes do not hash to
// its info_hash as its hash_type says (SHA-1 for v1, SHA-256 cut to 20
// bytes for v2), as fetch and a results merge verify them: a torrent
// this dataset stores is one whose dictionary is the hash's, whichever
// dataset fetched it. Its checksum cannot tell: a file rewritten with
// another dictionary (or a dataset built by hand) has a valid one. A row
// without info_bytes (nothing to verify) is taken as it is. The caller
// adds "merge --from: ".
func checkTorrentHash(path string, n int64, t *schema.Torrent) error {
	if len(t.InfoBytes) == 0 {
		return nil
	}
	var ok bool
	switch t.HashType {
	case schema.HashV2:
		sum := sha256.Sum256(t.InfoBytes)
		ok = bytes.Equal(sum[:20], t.InfoHash[:])
	default:
		ok = sha1Sum(t.InfoBytes) == t.InfoHash
	}
	if ok {
		return nil
	}
	return exitcode.BadInput(fmt.Errorf("%s: row %d: %s: info_bytes do not hash to its info_hash (hash_type %d): "+
		"a torrent fetch did not verify; nothing is merged", path, n, schema.Hex(t.InfoHash), t.HashType))
}
