package merge

import (
	"bytes"
	"fmt"
	"log/slog"

	"github.com/infohash/infohash/formats/infodict"
	"github.com/infohash/infohash/formats/schema"
)

// A results file is untrusted input, and of an ok row merge verifies only
// info_bytes: they must hash to the infohash. The other metadata columns
// (name, name_raw, name_utf8_valid, total_size, piece_length, file_count,
// files, private) are what the info dictionary says, so merge does not
// take them as given: it decodes info_bytes with fetch's own code
// (infodict.Parse) and stores that. A row rewritten by hand (a forged
// name or size beside the real files) then stores the truth, as does a
// row from an older fetch or a tool that wrote the columns another way;
// merge warns once per input when rows disagreed (deriveMeta's differs),
// but not for the rows of a fetch that counted BEP 47 pad files (their
// columns were what info_bytes said then; merge stores them without).
//
// info_bytes that fetch would refuse today (infodict.ParseAs for the
// row's hash_type: a v1 dictionary under a v2 hash, as a fetch before
// it checked versions stored ok; a file without a length, as a fetch
// before BEP 3 and 52 were checked; no info dictionary at all, as a
// hand-written row) make the row what fetch would have written: a failed
// invalid_metadata attempt (failInvalid), a per-row outcome, final as
// fetch's (the bytes are the hash's, whoever serves them). merge warns
// once per input (warnInvalid).

// deriveMeta replaces r's metadata columns with those its info_bytes
// (verified by checkResult) give. It reports whether the columns r held
// differed; it fails, wrapping infodict.ErrInvalid, when info_bytes are
// no valid info dictionary of r's hash_type (the caller's failInvalid).
// Decoding costs ~0.06 ms for a 9 KB dictionary of 20 files
// (BenchmarkReadOKResults).
func deriveMeta(r *schema.Result) (differs bool, err error) {
	m, err := infodict.ParseAs(r.InfoBytes, r.HashType)
	if err != nil {
		return false, err
	}
	differs = !sameMeta(&r.ResultMeta, &m)
	if differs {
		// A fetch before BEP 47 pad files were left out counted them:
		// such a row holds what its info_bytes said then.
		if old, err := infodict.ParseWithPads(r.InfoBytes); err == nil && sameMeta(&r.ResultMeta, &old) {
			differs = false
		}
	}
	r.ResultMeta = schema.OKMeta(m)
	return differs, nil
}

// sameMeta reports whether a result's columns a hold the metadata b (a
// null and an empty byte string or list alike: writers differ there; an
// older fetch wrote an empty name, a size or count of 0 as null, which
// reads as that zero, and a null boolean reads as false).
func sameMeta(a *schema.ResultMeta, b *schema.Meta) bool {
	if !sameValue(a.Name, b.Name) || !bytes.Equal(a.NameRaw, b.NameRaw) || !sameValue(a.NameUTF8Valid, &b.NameUTF8Valid) ||
		!sameValue(a.TotalSize, b.TotalSize) || !sameValue(a.PieceLength, b.PieceLength) ||
		!sameValue(a.FileCount, b.FileCount) || !sameValue(a.Private, &b.Private) || len(a.Files) != len(b.Files) {
		return false
	}
	for i := range a.Files {
		fa, fb := &a.Files[i], &b.Files[i]
		if fa.Path != fb.Path || !bytes.Equal(fa.PathRaw, fb.PathRaw) || fa.Length != fb.Length {
			return false
		}
	}
	return true
}

// sameValue compares two optional values, a null as the zero value.
func sameValue[T comparable](a, b *T) bool {
	var za, zb T
	if a != nil {
		za = *a
	}
	if b != nil {
		zb = *b
	}
	return za == zb
}

// failInvalid makes r, an ok row whose info_bytes deriveMeta refused
// with err, the failed attempt fetch would have written for them:
// outcome invalid_metadata, the detail naming the problem, no metadata,
// no served_by (its peers' failures, other peers', stay).
func failInvalid(r *schema.Result, err error) {
	r.Outcome = schema.OutcomeInvalidMetadata
	r.Detail = fmt.Sprintf("merge: the row said ok, but its info_bytes (hash_type %d) are refused: %v", r.HashType, err)
	r.ResultMeta, r.InfoHashV2, r.ServedBy = schema.ResultMeta{}, nil, ""
}

// warnInvalid says once per input how many of its ok rows failInvalid
// made invalid_metadata, the first one's hash and why.
func warnInvalid(name string, n int64, first schema.Hash, detail string) {
	if n > 0 {
		slog.Warn("merge: ok results whose info_bytes are no valid info dictionary of their hash_type; stored as invalid_metadata",
			"input", name, "rows", n, "first", schema.Hex(first), "detail", detail)
	}
}
