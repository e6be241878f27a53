package merge

import (
	"errors"
	"fmt"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/internal/exitcode"
)

// fromError is the error of a --from OTHER_DIR that could not be opened.
// One that does not exist or holds no dataset (and lies in none) gets a
// hint of its own: the one dataset.OpenReadOnly gives, that dedup --data
// makes a dataset, is for --data; OTHER_DIR names an existing dataset to
// union in, which a mistyped path is not.
func fromError(from string, err error) error {
	why := dataset.ErrNoFolder
	if !errors.Is(err, why) {
		why = dataset.ErrNotDataset
	}
	if _, nested := dataset.Nested(from); nested || !errors.Is(err, why) {
		return fmt.Errorf("merge --from: %w", err)
	}
	return exitcode.BadInput(fmt.Errorf("merge --from: dataset: %s: %w; --from names an existing dataset to union into --data: check the path", from, why))
}
