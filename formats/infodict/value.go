package infodict

import "github.com/infohash/infohash/formats/bencode"

// decodeValue decodes the bencoded value b, exactly one, into the generic
// form the anacrolix decoder gives (int64, string, []any, map[string]any),
// with formats/bencode's walker: keys may come unsorted, as Parse accepts
// them everywhere (the anacrolix decoder refuses them in a generic
// dictionary, which made a BEP 52 file tree with unsorted keys invalid
// when the rest of the info dictionary would have been taken). A key
// repeated keeps its last value (Parse refuses repeated keys before).
// It recurses once per level, at most MaxDepth deep (the decoder's cap).
func decodeValue(b []byte) (any, error) {
	d := bencode.NewDecoder(b, bencode.Limits{MaxDepth: MaxDepth})
	v, err := value(d)
	if err == nil && d.Offset() != len(b) {
		err = d.Fail("trailing bytes")
	}
	return v, err
}

func value(d *bencode.Decoder) (any, error) {
	switch c := d.Peek(); {
	case c == 'i':
		return d.Int()
	case c >= '0' && c <= '9':
		s, err := d.String()
		return string(s), err
	case c == 'l':
		if err := d.List(); err != nil {
			return nil, err
		}
		l := []any{}
		for !d.End() {
			v, err := value(d)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case c == 'd':
		if err := d.Dict(); err != nil {
			return nil, err
		}
		m := map[string]any{}
		for !d.End() {
			k, err := d.String()
			if err != nil {
				return nil, err
			}
			if m[string(k)], err = value(d); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	return nil, d.Fail("invalid value")
}
