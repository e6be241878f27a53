package rowio

import (
	"fmt"

	"github.com/parquet-go/parquet-go"
)

// CheckSchema verifies that every required leaf column of want is in got
// with the same physical type.
func CheckSchema(want, got *parquet.Schema) error {
	for _, path := range want.Columns() {
		wl, _ := want.Lookup(path...)
		gl, ok := got.Lookup(path...)
		if !ok {
			if isOptionalPath(want, path) {
				continue
			}
			return fmt.Errorf("missing required column %q", joinPath(path))
		}
		if repeats(got, path) > repeats(want, path) {
			return fmt.Errorf("column %q is REPEATED, want one value a row", joinPath(path))
		}
		if wk, gk := wl.Node.Type().Kind(), gl.Node.Type().Kind(); wk != gk {
			return fmt.Errorf("column %q is %s, want %s", joinPath(path), gk, wk)
		}
		if wl.Node.Type().Kind() == parquet.FixedLenByteArray && wl.Node.Type().Length() != gl.Node.Type().Length() {
			return fmt.Errorf("column %q is FIXED_LEN_BYTE_ARRAY(%d), want (%d)", joinPath(path), gl.Node.Type().Length(), wl.Node.Type().Length())
		}
	}
	return nil
}

func isOptionalPath(s *parquet.Schema, path []string) bool {
	for _, n := range pathNodes(s, path) {
		if n.Optional() || n.Repeated() {
			return true
		}
	}
	return false
}

// repeats counts the repeated nodes on path in s (its maximum repetition
// level): parquet-go reads a column repeated more often than the row type's
// field as the field's first value a row, dropping the others.
func repeats(s *parquet.Schema, path []string) int {
	r := 0
	for _, n := range pathNodes(s, path) {
		if n.Repeated() {
			r++
		}
	}
	return r
}

// pathNodes returns the nodes of s along path, as far as s has them.
func pathNodes(s *parquet.Schema, path []string) []parquet.Node {
	var nodes []parquet.Node
	var n parquet.Node = s
	for _, p := range path {
		var next parquet.Node
		for _, f := range n.Fields() {
			if f.Name() == p {
				next = f
			}
		}
		if next == nil {
			break
		}
		nodes = append(nodes, next)
		n = next
	}
	return nodes
}

func joinPath(p []string) string {
	s := ""
	for i, e := range p {
		if i > 0 {
			s += "."
		}
		s += e
	}
	return s
}
