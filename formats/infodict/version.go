package infodict

import (
	"bytes"
	"fmt"

	"github.com/infohash/infohash/formats/schema"
)

// ErrVersion is wrapped by the errors ParseAs returns for an info
// dictionary that is not of the version of the hash it matched; it wraps
// ErrInvalid.
var ErrVersion = fmt.Errorf("%w: not of its infohash's version", ErrInvalid)

// ParseAs is Parse for info bytes that proved an infohash of type typ:
// schema.HashV1 when their SHA-1 is it, schema.HashV2 when their SHA-256
// is (whole or truncated to 20 bytes). It also fails, with ErrVersion,
// when the dictionary is not of that version, as no client would take
// it for that hash:
//
//   - v2: BEP 52 wants "meta version" 2 (a v2 or hybrid dictionary) and
//     a "file tree" dictionary. A v1 dictionary has neither: its SHA-256
//     is no infohash (its own is its SHA-1).
//   - v1: a "length" or "files" (BEP 3). A v2-only dictionary has only
//     a file tree: its SHA-1 is no infohash (its own is its SHA-256).
//
// A hybrid dictionary, with both (describing the same files: hybrid.go),
// is either. The hash pins the bytes, so the failure is the hash's,
// whoever served them. Parse does not check the hash's version; it
// refuses, under either hash and not as ErrVersion, a meta version
// above 2 or not an integer (strict.go: BEP 52's newer, incompatible
// versions), and meta version 2 without a file tree dictionary or one
// without meta version 2 (strict.go: neither v1 nor v2), which ParseAs
// so refuses first.
func ParseAs(info []byte, typ int8) (schema.Meta, error) {
	m, raw, err := parse(info, false)
	if err != nil {
		return m, err
	}
	if typ == schema.HashV2 {
		err = checkV2(&raw)
	} else if raw.Length == nil && raw.Files == nil {
		err = fmt.Errorf("%w: no length or files: a v2-only (BEP 52) info dictionary, whose SHA-1 is no infohash", ErrVersion)
	}
	if err != nil {
		return schema.Meta{}, err
	}
	return m, nil
}

// checkV2 checks what BEP 52 wants of a v2 or hybrid info dictionary:
// meta version 2 (parse has checked that it comes with a file tree
// dictionary, and that none comes without it).
func checkV2(raw *rawInfo) error {
	switch {
	case raw.MetaVersion == nil:
		return fmt.Errorf("%w: no meta version: a v1 info dictionary, whose SHA-256 is no infohash "+
			"(BEP 52: a v2 or hybrid one has meta version 2)", ErrVersion)
	case !bytes.Equal(raw.MetaVersion, []byte("i2e")):
		return fmt.Errorf("%w: meta version %q, not 2 (BEP 52)", ErrVersion, Clip(raw.MetaVersion))
	}
	return nil
}
