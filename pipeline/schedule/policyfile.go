package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
)

// FileName is the policy's file name inside a dataset directory.
const FileName = "policy.json"

// maxPolicySize bounds the policy file Load reads.
const maxPolicySize = 1 << 20

// openPolicy opens DIR/policy.json (fsutil.OpenRegularTarget; a variable
// for tests: to put something there just before the open).
var openPolicy = fsutil.OpenRegularTarget

// Path returns DIR/policy.json.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Load reads and validates DIR/policy.json. A dataset without one (made
// before policies existed) gets Default. Errors name the file and the
// field: "policy: DIR/policy.json: backoff.no_peers[2]: ...".
func Load(dir string) (Policy, error) {
	p, err := LoadUnvalidated(dir)
	if err != nil {
		return Policy{}, err
	}
	if err := p.Validate(); err != nil {
		return Policy{}, fmt.Errorf("policy: %s: %w", Path(dir), err)
	}
	return p, nil
}

// LoadUnvalidated is Load without Validate: the file must be well-formed
// JSON of the policy's fields and types, but its values may break the
// policy's rules. "policy set" starts from it so that it can repair such
// a file; it validates the result.
func LoadUnvalidated(dir string) (Policy, error) {
	path := Path(dir)
	// Only a regular file, checked on what was opened: a FIFO there would
	// block the read for good (a link is followed: Save writes through
	// it).
	f, err := openPolicy(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if err := danglingLink(path); err != nil {
			return Policy{}, err
		}
		return Default(), nil
	}
	if err != nil {
		return Policy{}, fmt.Errorf("policy: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPolicySize+1))
	if err != nil {
		return Policy{}, fmt.Errorf("policy: %s: %w", path, err)
	}
	return decodeFile(data, path)
}

// danglingLink is an error when path, where no file is, is a symbolic
// link to nothing (the shared policy file moved away): read as no file,
// every stage would run on the defaults, unsaid.
func danglingLink(path string) error {
	if target, err := os.Readlink(path); err == nil {
		return fmt.Errorf("policy: %s is a symbolic link to %q, which does not exist "+
			"(remove the link for the defaults)", path, target)
	}
	return nil
}

// decodeFile is Decode of the policy file at path, whose first
// maxPolicySize+1 bytes are data.
func decodeFile(data []byte, path string) (Policy, error) {
	if len(data) > maxPolicySize {
		return Policy{}, fmt.Errorf("policy: %s: larger than %d bytes", path, maxPolicySize)
	}
	return Decode(data, path)
}

// Of reads and validates the policy that transaction tx works under:
// DIR/policy.json as tx's Begin read it (Default if there was none), as
// Load would have then. A stage that schedules reads it at every try,
// after Begin, and records it with tx.SetPolicy(p.JSON()): the commit is
// then a conflict, re-applied under the new policy, if "policy set"
// replaced it meanwhile.
func Of(tx *dataset.Tx) (Policy, error) {
	path, data, err := tx.PolicyFile()
	if err != nil {
		return Policy{}, fmt.Errorf("policy: %w", err)
	}
	if data == nil {
		if err := danglingLink(path); err != nil {
			return Policy{}, err
		}
		return Default(), nil
	}
	p, err := decodeFile(data, path)
	if err != nil {
		return Policy{}, err
	}
	if err := p.Validate(); err != nil {
		return Policy{}, fmt.Errorf("policy: %s: %w", path, err)
	}
	return p, nil
}

// Parse decodes and validates a policy; name labels errors. Fields left
// out keep their Default values; a map (backoff, peer_penalty.base) is
// merged key by key into the default one, and a list replaces the
// default list.
func Parse(data []byte, name string) (Policy, error) {
	p, err := Decode(data, name)
	if err != nil {
		return Policy{}, err
	}
	if err := p.Validate(); err != nil {
		return Policy{}, fmt.Errorf("policy: %s: %w", name, err)
	}
	return p, nil
}

// Decode is Parse without Validate: it refuses only what is not a policy
// at all (bad JSON, unknown fields, wrong types, bad durations, a null,
// a key given twice).
func Decode(data []byte, name string) (Policy, error) {
	p := Default()
	if path, ok := nullPath(data); ok && path == "" {
		return Policy{}, fmt.Errorf("policy: %s: policy: want an object, got null", name)
	} else if ok {
		return Policy{}, fmt.Errorf("policy: %s: %s: null is no value: give one, or leave the field out for its default", name, path)
	}
	if path, ok := dupKeyPath(data); ok {
		return Policy{}, fmt.Errorf("policy: %s: %s: given twice: keep one", name, path)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("policy: %s: %s", name, describeJSONError(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return Policy{}, fmt.Errorf("policy: %s: unexpected data after the policy object", name)
	}
	return p.canonical(), nil
}

// Save validates p and writes it to DIR/policy.json atomically (temporary
// file, fsync, rename, directory fsync).
func Save(dir string, p Policy) error {
	path := Path(dir)
	if err := p.Validate(); err != nil {
		return fmt.Errorf("policy: %s: %w", path, err)
	}
	// As an output: a policy.json that links to a managed file keeps its
	// link, and a replaced file its mode.
	if err := fsutil.WriteOutput(path, p.JSON()); err != nil {
		return fmt.Errorf("policy: %s: %w", path, err)
	}
	return nil
}

// SaveDefault writes the Default policy to DIR/policy.json unless the
// dataset already has a policy file, which it never replaces: a "policy
// set" that got there first (under the writer lock) keeps its values.
func SaveDefault(dir string) error {
	path := Path(dir)
	if _, err := fsutil.WriteFileIfAbsent(path, Default().JSON()); err != nil {
		return fmt.Errorf("policy: %s: %w", path, err)
	}
	return nil
}

// JSON renders p as the indented, canonical text Save writes (and
// `infohash policy show` prints), ending in a newline.
func (p Policy) JSON() []byte {
	b, err := json.MarshalIndent(p.canonical(), "", "  ")
	if err != nil { // cannot happen: every field marshals
		panic("schedule: marshal policy: " + err.Error())
	}
	// One line per list of plain strings: a schedule reads as a schedule.
	b = stringList.ReplaceAllFunc(b, func(m []byte) []byte {
		return bytes.ReplaceAll(space.ReplaceAll(m, nil), []byte(","), []byte(", "))
	})
	return append(b, '\n')
}

var (
	stringList = regexp.MustCompile(`\[\s*"[^"\\\[\]{},\s]*"(?:,\s*"[^"\\\[\]{},\s]*")*\s*\]`)
	space      = regexp.MustCompile(`\s+`)
)

// canonical returns p with set-like lists sorted, so that equal policies
// marshal (and hash) equally.
func (p Policy) canonical() Policy {
	p.Reactivation.Classes = slices.Clone(p.Reactivation.Classes)
	slices.Sort(p.Reactivation.Classes)
	return p
}

// describeJSONError turns a decoding error into one line naming the
// place: a line and column for syntax errors, a field path otherwise.
func describeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var dur *DurationError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return fmt.Sprintf("line %d, column %d: %s", line, col, syn.Error())
	case errors.As(err, &typ):
		return fmt.Sprintf("%s: want %s, got %s", orTop(typ.Field), jsonKind(typ.Type), typ.Value)
	case errors.As(err, &dur):
		if path := durationPath(data, dur.Raw); path != "" {
			return path + ": " + dur.Reason
		}
		return dur.Reason
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "empty or truncated JSON"
	}
	msg := err.Error()
	if m, ok := cutPrefix(msg, "json: "); ok {
		msg = m
	}
	return msg
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

func orTop(field string) string {
	if field == "" {
		return "policy"
	}
	return field
}

func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col = 1, 1
	for _, c := range data[:max(off-1, 0)] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
