package dedup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/internal/exitcode"
)

// noInput is the error (naming paths from data, DIR as given) of a run given no INPUT that found nothing in
// DIR/inbox/ to apply: errNoInput, unless the inbox holds partial inputs
// (a killed or cut stream's whole part, set aside as partial-*), which
// runs never apply on their own. Then it names them and says how to
// apply one, still as bad input (exit 2).
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
	if len(parts) == 0 {
		return errNoInput
	}
	return exitcode.BadInput(fmt.Errorf("dedup: no input: %s holds only partial input, which no run applies on its own (its producer may send it again): %s; "+
		"if it will not, apply it as an INPUT (infohash dedup --data %s %s), which removes it once applied",
		filepath.Join(data, "inbox")+string(filepath.Separator), strings.Join(parts, ", "), data, parts[0]))
}
