package merge

import (
	"crypto/sha1"

	"github.com/infohash/infohash/formats/schema"
)

// sha1Sum is the v1 infohash of an info dictionary.
func sha1Sum(b []byte) schema.Hash { return sha1.Sum(b) }
