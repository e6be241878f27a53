package schedule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// notDuration names the policy's scalar fields that are not durations;
// durationPath skips them when looking for a bad duration's text.
var notDuration = map[string]bool{
	"version": true, "seed": true, "jitter": true, "sources": true, "factor": true,
	"min_attempts": true, "new_share": true, "new_overdue_share": true, "cold_share": true, "cold_partitions": true, "reset_schedule": true,
	"classes": true,
}

type jsonFrame struct {
	obj     bool
	wantKey bool
	key     string
	idx     int
}

// durationPath returns the JSON path ("backoff.no_peers[2]") of the first
// duration-typed value in data whose source text is raw, or "".
func durationPath(data []byte, raw string) string {
	path := ""
	walkJSON(data, func(stack []jsonFrame, tok json.Token, text string) bool {
		if _, key := tok.(jsonKey); !key && text == raw && !skipPath(stack) {
			path = renderPath(stack)
			return true
		}
		return false
	})
	return path
}

// nullPath returns the JSON path of the first null in data ("" for data
// that is null itself) and whether there is one. No policy field takes
// null: decoded, it would keep the field's default, or empty a list.
func nullPath(data []byte) (string, bool) {
	path, found := "", false
	walkJSON(data, func(stack []jsonFrame, tok json.Token, _ string) bool {
		if tok == nil {
			path, found = renderPath(stack), true
		}
		return found
	})
	return path, found
}

// dupKeyPath returns the JSON path of the first key that data gives
// twice in one object (in any case, as encoding/json matches a field's
// name), and whether there is one: decoded, the last one would win,
// unsaid.
func dupKeyPath(data []byte) (string, bool) {
	seen := map[string]bool{}
	path, found := "", false
	walkJSON(data, func(stack []jsonFrame, tok json.Token, _ string) bool {
		if _, key := tok.(jsonKey); key {
			// encoding/json matches a field's name in any case.
			path = renderPath(stack)
			p := strings.ToLower(path)
			found, seen[p] = seen[p], true
		}
		return found
	})
	return path, found
}

// jsonKey is an object's key as walkJSON visits it, before its value.
type jsonKey string

// walkJSON calls visit with each key (a jsonKey, the frame on top of
// stack holding it) and scalar value of data, its place and its source
// text, until visit returns true or data ends (or is not JSON: Decode
// says why).
func walkJSON(data []byte, visit func(stack []jsonFrame, tok json.Token, text string) bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []jsonFrame
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].obj {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].idx++
			}
		}
	}
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		end := dec.InputOffset()
		text := strings.TrimLeft(string(data[prev:end]), " \t\r\n,:")
		prev = end
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			if key, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].wantKey = key, false
				if visit(stack, jsonKey(key), text) {
					return
				}
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, jsonFrame{obj: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, jsonFrame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			afterValue()
		default:
			if visit(stack, tok, text) {
				return
			}
			afterValue()
		}
	}
}

func skipPath(stack []jsonFrame) bool {
	for _, f := range stack {
		if f.obj && notDuration[f.key] {
			return true
		}
	}
	return false
}

func renderPath(stack []jsonFrame) string {
	path := ""
	for _, f := range stack {
		if f.obj {
			path = keyPath(path, f.key)
		} else {
			path += fmt.Sprintf("[%d]", f.idx)
		}
	}
	return path
}

// keyPath is the JSON path of key in the object at path prefix (""
// for the policy itself): prefix.key, or prefix["key"] as jq writes it
// (the key quoted by Go) when the key is not a plain name of letters,
// digits, _ and -. Keys are the user's (policy.json's, or a map key
// "policy set" adds): one holding a newline must not break the error
// that names it over two lines, nor one holding a dot or bracket pass
// for a deeper path.
func keyPath(prefix, key string) string {
	if !plainKey(key) {
		return fmt.Sprintf("%s[%q]", prefix, key)
	}
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func plainKey(key string) bool {
	if key == "" {
		return false
	}
	for _, c := range key {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
