package infodict

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/infohash/infohash/formats/bencode"
)

// uniqueKeys checks that no dictionary in the bencoded value b, at any
// level, holds a key twice. BEP 3 wants keys unique and sorted; a reader
// keeps one of two values (anacrolix the last), another reader may keep
// the other, and the info hash covers both, so a repeated key makes the
// metadata ambiguous. Unsorted keys are not refused here: old torrents
// have them. Malformed bencode is not reported either (it returns nil
// there, for Scan to say what is wrong): uniqueKeys runs first so that a
// repeated key is named as such wherever it is, which the reflective
// decoder does not do. It walks b once, keeping the keys of the open
// dictionaries in one slice that aliases b, and sorts a dictionary's keys
// only when they came unsorted.
func uniqueKeys(b []byte) error {
	d := bencode.NewDecoder(b, bencode.Limits{MaxDepth: MaxDepth})
	var keys [][]byte
	if err := walkKeys(d, &keys); err != nil && !bencode.IsSyntax(err) {
		return err
	}
	return nil
}

// walkKeys reads one value. keys holds the keys read so far of each open
// dictionary, innermost last; a dictionary's keys are dropped at its end.
// It recurses once per level, at most MaxDepth deep (the decoder's cap).
func walkKeys(d *bencode.Decoder, keys *[][]byte) error {
	switch d.Peek() {
	case 'l':
		if err := d.List(); err != nil {
			return err
		}
		for !d.End() {
			if err := walkKeys(d, keys); err != nil {
				return err
			}
		}
		return nil
	case 'd':
		start := d.Offset()
		if err := d.Dict(); err != nil {
			return err
		}
		base, sorted := len(*keys), true
		for !d.End() {
			k, err := d.String()
			if err != nil {
				return err
			}
			if n := len(*keys); sorted && n > base {
				switch bytes.Compare(k, (*keys)[n-1]) {
				case 0:
					return repeated(start, k)
				case -1:
					sorted = false
				}
			}
			*keys = append(*keys, k)
			if err := walkKeys(d, keys); err != nil {
				return err
			}
		}
		if own := (*keys)[base:]; !sorted {
			slices.SortFunc(own, bytes.Compare)
			for i := 1; i < len(own); i++ {
				if bytes.Equal(own[i-1], own[i]) {
					return repeated(start, own[i])
				}
			}
		}
		*keys = (*keys)[:base]
		return nil
	default:
		return d.Skip()
	}
}

func repeated(dict int, key []byte) error {
	return fmt.Errorf("%w: the dictionary at byte %d repeats key %q", ErrInvalid, dict, Clip(key))
}
