package dataset

import (
	"path/filepath"
	"strings"
)

// AbsName is name, an input's name as a stage gives it (a path as the
// user named it, or one in words: "leftover PATH", "stdin (PATH)", "FIFO
// (PATH)"), with each of paths, where name holds it, made absolute: the
// Name an Applied records. The ledger is read by people (status's last
// input, export --table ledger) from anywhere and long after the run, and
// a path relative to the folder the run was started in named no file
// there. A path absolute already, or one name does not hold, is left as
// it is; so is name when the working directory is unknown. Each path is
// looked for after the previous one's place, in order.
func AbsName(name string, paths ...string) string {
	var b strings.Builder
	rest := name
	for _, p := range paths {
		if p == "" || filepath.IsAbs(p) {
			continue
		}
		i := strings.Index(rest, p)
		if i < 0 {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return name
		}
		b.WriteString(rest[:i] + abs)
		rest = rest[i+len(p):]
	}
	return b.String() + rest
}
