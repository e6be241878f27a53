package merge

import (
	"os"
	"path/filepath"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/inputdir"
)

// NothingToApply reports whether a run on inputs into the dataset data
// has nothing to do: every RESULTS (one at least) is a folder that holds
// no input file (one info line says so for each), and DIR/inbox/merge/
// holds no leftover, which a run would apply as a bare one does. A
// caller may then end at once, exit 0, opening and making nothing.
// False when data holds no dataset: Run says so.
func NothingToApply(data string, inputs []string) bool {
	if len(inputs) == 0 || leftoversIn(data) {
		return false
	}
	if _, err := os.Stat(filepath.Join(data, "CURRENT")); err != nil {
		return false
	}
	for _, a := range inputs {
		if a == "-" || !inputdir.Empty(a) {
			return false
		}
	}
	for _, a := range inputs {
		inputdir.Files("merge", a, "") // the info line
	}
	return true
}

// leftoversIn reports whether DIR/inbox/merge/ of data holds a file
// resolveInputs would take up as a leftover of an earlier run, locked
// or not.
func leftoversIn(data string) bool {
	ents, _ := os.ReadDir(filepath.Join(data, inboxDir))
	for _, e := range ents {
		if dataset.IsSpool(e, ".results") {
			return true
		}
	}
	return false
}
