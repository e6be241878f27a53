package schedule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Set returns p with the field at path (the JSON path used in errors:
// "jitter", "backoff.no_peers", "backoff.no_peers[2]", "reactivation.delay")
// set from text, then validated. Lists take comma-separated items
// ("30m,2h,8h"); numbers, true/false and durations are written as such.
func Set(p Policy, path, text string) (Policy, error) {
	q, err := Assign(p, path, text)
	if err != nil {
		return Policy{}, err
	}
	if err := q.Validate(); err != nil {
		return Policy{}, err
	}
	return q, nil
}

// Assign is Set without Validate: the value must have the setting's type,
// but the result may still break the policy's rules. Several assignments
// are applied with Assign and their result validated once, so that a
// policy that is invalid (or becomes valid only after all of them) can be
// repaired. A path that names no setting is an error listing the
// settings there are.
func Assign(p Policy, path, text string) (Policy, error) {
	keys, idx, err := splitPath(path)
	if err != nil {
		return Policy{}, err
	}
	if err := checkSetting(path, keys); err != nil {
		return Policy{}, err
	}
	var tree map[string]any
	dec := json.NewDecoder(bytes.NewReader(p.JSON()))
	dec.UseNumber() // seeds above 2^53 stay exact
	if err := dec.Decode(&tree); err != nil {
		return Policy{}, err
	}
	parent := tree
	for _, k := range keys[:len(keys)-1] {
		next, ok := parent[k].(map[string]any)
		if !ok {
			return Policy{}, fmt.Errorf("%q: no such setting (%q is not an object)", path, k)
		}
		parent = next
	}
	last := keys[len(keys)-1]
	cur, exists := parent[last]
	if !exists {
		cur = sample(parent) // a new key of a map: shaped like its siblings
		if cur == nil {
			return Policy{}, fmt.Errorf("%q: no such setting", path)
		}
	}
	if idx >= 0 {
		list, ok := cur.([]any)
		if !ok || idx >= len(list) {
			return Policy{}, fmt.Errorf("%q: no such list item", path)
		}
		v, err := valueLike(list[idx], text)
		if err != nil {
			return Policy{}, fmt.Errorf("%q: %w", path, err)
		}
		list[idx] = v
	} else {
		v, err := valueLike(cur, text)
		if err != nil {
			return Policy{}, fmt.Errorf("%q: %w", path, err)
		}
		parent[last] = v
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return Policy{}, err
	}
	q, err := Decode(b, "")
	if err != nil {
		return Policy{}, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "policy: : "))
	}
	return q, nil
}

func splitPath(path string) (keys []string, idx int, err error) {
	idx = -1
	if i := strings.IndexByte(path, '['); i >= 0 {
		if !strings.HasSuffix(path, "]") {
			return nil, 0, fmt.Errorf("%q: bad list index", path)
		}
		n, err := strconv.Atoi(path[i+1 : len(path)-1])
		if err != nil || n < 0 {
			return nil, 0, fmt.Errorf("%q: bad list index", path)
		}
		idx, path = n, path[:i]
	}
	keys = strings.Split(path, ".")
	for _, k := range keys {
		if k == "" {
			return nil, 0, fmt.Errorf("%q: empty name in the path", path)
		}
	}
	return keys, idx, nil
}

// sample returns one value of m, so a new key can be typed like the
// others.
func sample(m map[string]any) any {
	for _, v := range m {
		return v
	}
	return nil
}

// valueLike parses text as a JSON value of the same shape as like.
func valueLike(like any, text string) (any, error) {
	switch like.(type) {
	case []any:
		if strings.TrimSpace(text) == "" {
			return []any{}, nil
		}
		var out []any
		for _, s := range strings.Split(text, ",") {
			out = append(out, strings.TrimSpace(s))
		}
		return out, nil
	case json.Number:
		if _, err := strconv.ParseFloat(text, 64); err != nil || !json.Valid([]byte(text)) {
			return nil, fmt.Errorf("%q is not a number", text)
		}
		return json.Number(text), nil
	case bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", text)
		}
		return b, nil
	case string:
		return text, nil
	}
	return nil, fmt.Errorf("cannot be set from the command line; edit policy.json")
}
