package dedup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/inputdir"
	"github.com/infohash/infohash/internal/exitcode"
)

// noInput is the error (naming paths from data, DIR as given) of a run
// given no INPUT that found nothing in DIR/inbox/ to apply: errNoInput,
// unless the inbox holds partial inputs (a killed or cut stream's whole
// part, set aside as partial-*), which runs never apply on their own.
// Then it names them and says how to apply one, still as bad input (exit
// 2). Either says when another run is still spooling its stdin there, or
// holds a whole spool it is about to apply (dataset.LiveSpools): the
// line said only "holds nothing left to apply", as if that input were
// lost.
func noInput(d *dataset.Dataset, data string) error {
	inbox := d.Path("inbox")
	ents, err := os.ReadDir(inbox)
	if err != nil {
		return errNoInput
	}
	var parts []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), dataset.PartialPrefix) {
			parts = append(parts, filepath.Join(data, "inbox", e.Name()))
		}
	}
	live := dataset.LiveSpools(inbox, filepath.Join(data, "inbox"), ".spool")
	if len(parts) == 0 && live == "" {
		return errNoInput
	}
	if len(parts) == 0 {
		return exitcode.BadInput(fmt.Errorf("dedup: no input: name files, folders, or - for stdin (DIR/inbox/ holds nothing left to apply%s)", live))
	}
	return exitcode.BadInput(fmt.Errorf("dedup: no input: %s holds only partial input, which no run applies on its own (its producer may send it again): %s; "+
		"if it will not, apply it as an INPUT (infohash dedup --data %s %s), which removes it once applied%s",
		filepath.Join(data, "inbox")+string(filepath.Separator), strings.Join(parts, ", "), data, parts[0], live))
}

// onlyEmptyFolders reports whether every one of inputs (one at least) is
// a folder that holds no input file (folderFiles), logging for each the
// info line that says so: then the run has nothing to apply but what
// DIR/inbox/ may hold (leftoversIn), and exits 0 without even opening
// the dataset when that holds nothing. Anything else (a file, stdin, a
// missing path, a folder that cannot be read) is for resolveInputs.
func onlyEmptyFolders(inputs []string) bool {
	for _, a := range inputs {
		if a == "-" {
			return false
		}
		if !inputdir.Empty(a) {
			return false
		}
	}
	for _, a := range inputs {
		folderFiles(a) // the info line
	}
	return len(inputs) > 0
}

// NothingToApply reports whether a run on inputs into data has nothing
// to do: every INPUT is a folder holding no input file (one info line
// says so for each), DIR/inbox/ holds no leftover, and data is a DIR a
// run with input would take (dataset.Makeable: it holds a dataset, or
// may get one). Run then returns at once, exit 0; a caller may skip what
// it does before Run (app writes DIR's default policy), so that such a
// run opens and makes nothing. A DIR a run with input would refuse (a
// typo) is refused all the same: false, and Run says why.
func NothingToApply(data string, inputs []string) bool {
	return dataset.Makeable(data) == nil && onlyEmptyFolders(inputs) && !leftoversIn(data)
}

// leftoversIn reports whether the folder DIR/inbox/ of data (which may
// hold no dataset) holds a file resolveInputs would take up as a
// leftover of an earlier run, locked or not.
func leftoversIn(data string) bool {
	ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
	for _, e := range ents {
		if dataset.IsSpool(e, ".spool") {
			return true
		}
	}
	return false
}
