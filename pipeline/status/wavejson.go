package status

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// WaveCounts counts hashes by wave name (Waves' Name): Report.RetryWaves,
// and each tier and kind of Report.WavesBy. In JSON its keys
// come in time order, overdue first and later last, as the text report
// prints the waves (encoding/json sorts a map's keys by name: within_1d
// came before within_1h); a key that names no wave follows, by name.
type WaveCounts map[string]int64

// MarshalJSON writes w as an object with its keys in time order.
func (w WaveCounts) MarshalJSON() ([]byte, error) {
	if w == nil {
		return []byte("null"), nil
	}
	keys := make([]string, 0, len(w))
	for _, wv := range Waves {
		if _, ok := w[wv.Name]; ok {
			keys = append(keys, wv.Name)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(strconv.AppendInt(nil, w[k], 10))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
