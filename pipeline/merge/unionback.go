package merge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/infohash/infohash/formats/dataset"
)

// unionedBefore reports whether one of the two datasets of a union has
// unioned a snapshot of the other that the other still keeps: its ledger
// holds the union's id (otherSnapshot's: "dataset:" and the SHA-256 of
// that snapshot's manifest) of a manifest in the other's manifests/
// (theirs are the other dataset's ledger entries). The two histories then
// overlap even when the ledgers share no input: the rows of a dataset
// that no ledger entry accounts for (stategen's, one made by hand) came
// into the other with that union, and adding the counts again (merge A
// into B, then B into A; or A into B again once A moved on) would count
// those sightings twice.
func (u *unioner) unionedBefore(theirs []dataset.Applied) (bool, error) {
	mine, err := manifestIDs(u.d.Dir)
	if err != nil {
		return false, err
	}
	for _, a := range theirs {
		if _, ok := mine[a.ID]; ok {
			return true, nil
		}
	}
	other, err := manifestIDs(u.od.Dir)
	if err != nil {
		return false, err
	}
	ids := make([]string, 0, len(other))
	for id := range other {
		ids = append(ids, id)
	}
	found, err := u.d.AppliedAmong(u.base, ids)
	return len(found) > 0, err
}

// manifestIDs is the union id (see otherSnapshot) of every manifest in
// dir/manifests/. One removed meanwhile (a writer's collection of old
// snapshots) is left out.
func manifestIDs(dir string) (map[string]struct{}, error) {
	md := filepath.Join(dir, "manifests")
	ents, err := os.ReadDir(md)
	if err != nil {
		return nil, fmt.Errorf("merge --from: %w", err)
	}
	ids := make(map[string]struct{}, len(ents))
	for _, e := range ents {
		if !manifestName(e.Name()) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(md, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("merge --from: %w", err)
		}
		ids[unionID(raw)] = struct{}{}
	}
	return ids, nil
}

// manifestName reports whether name is a manifest's: NNNNNNNNNNNN.json.
func manifestName(name string) bool {
	if len(name) != 17 || name[12:] != ".json" {
		return false
	}
	for _, c := range name[:12] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
