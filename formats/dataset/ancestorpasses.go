package dataset

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
)

// SplitLeaseID returns the pass and the dataset id of a lease ID of the
// form plan-retries writes (leases.ID: "L", the pass's 16 hex digits,
// "-", the dataset's id), and two empty strings for any other: the older
// form (plan-retries before format 8), null, or one no plan-retries
// wrote. It lives here, not in formats/leases, for ancestorPasses.
func SplitLeaseID(leaseID string) (pass, datasetID string) {
	p, ds, ok := strings.Cut(leaseID, "-")
	if !ok || len(p) != 17 || p[0] != 'L' || !ValidDatasetID(p[1:]) || !ValidDatasetID(ds) {
		return "", ""
	}
	return p[1:], ds
}

// ancestorPasses is Manifest.AncestorPasses for a copy of base whose
// ancestors are ancestors (base.DatasetID first). An ancestor base has an
// entry for keeps it: recorded when base was copied from it, it holds
// every pass whose leases base still has of it, and those whose jobs
// came back since (a late result of one is still the copy's). The others
// (base's own id; one a copy made before format 11 names) get the passes
// of their jobs that base's leases table holds leases of: whatever
// that ancestor plans later is not the copy's. Over MaxAncestorPasses of
// one ancestor, it gets no entry (all its jobs taken), and a warning.
// The leases are all a dataset keeps of its passes: one none of whose
// leases was left at the copy (its jobs came back, or their hashes were
// planned again) is not recorded, and a result of it sent after all,
// which the original takes as a late one, the copy refuses.
func (d *Dataset) ancestorPasses(base *Manifest, ancestors []string) (map[string][]string, error) {
	out := map[string][]string{}
	sets := map[string]map[string]bool{}
	for _, id := range ancestors {
		if passes, ok := base.AncestorPasses[id]; ok {
			out[id] = slices.Clone(passes)
		} else {
			sets[id] = map[string]bool{}
		}
	}
	if len(sets) == 0 {
		return out, nil
	}
	t := base.Table(TableLeases)
	err := EachPartitionBatch(d, t, "", func(rows []leaseIDs) error {
		for i := range rows {
			pass, ds := SplitLeaseID(rows[i].LeaseID)
			if set, ok := sets[ds]; ok && len(set) <= MaxAncestorPasses {
				set[pass] = true // one past the bound tells it was passed
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: reading the copied leases for their passes: %w", d.Dir, err)
	}
	for _, id := range slices.Sorted(maps.Keys(sets)) {
		if len(sets[id]) > MaxAncestorPasses {
			slog.Warn(fmt.Sprintf("dataset: the copy holds leases of more than %d passes of dataset %s: "+
				"it takes all of that dataset's jobs, those planned after the copy too", MaxAncestorPasses, id),
				"dir", d.Dir, "ancestor", id)
			continue
		}
		out[id] = append([]string{}, slices.Sorted(maps.Keys(sets[id]))...) // none: [], not null
	}
	return out, nil
}

// leaseIDs is the column of schema.Lease that ancestorPasses reads (the
// whole rows took 2-3 times as long: 20k leases, 20-70 ms).
type leaseIDs struct {
	LeaseID string `parquet:"lease_id"`
}

// checkPasses checks what format 11 adds: an entry of AncestorPasses
// only for an ancestor, of at most MaxAncestorPasses passes, each a pass
// of leases.ID's form, sorted, each once.
func (m *Manifest) checkPasses() error {
	if m.FormatVersion < PassesFormat && m.AncestorPasses != nil {
		return fmt.Errorf("ancestor_passes in a manifest of format %d (from %d on)", m.FormatVersion, PassesFormat)
	}
	for _, id := range slices.Sorted(maps.Keys(m.AncestorPasses)) {
		passes := m.AncestorPasses[id]
		switch {
		case !slices.Contains(m.AncestorIDs, id):
			return fmt.Errorf("ancestor_passes: %s is not one of ancestor_ids", excerpt(id))
		case len(passes) > MaxAncestorPasses:
			return fmt.Errorf("ancestor_passes[%s]: %d passes, more than %d", id, len(passes), MaxAncestorPasses)
		}
		for i, p := range passes {
			switch {
			case !ValidDatasetID(p):
				return fmt.Errorf("ancestor_passes[%s][%d] %s is not 16 lowercase hex digits", id, i, excerpt(p))
			case i > 0 && p <= passes[i-1]:
				return fmt.Errorf("ancestor_passes[%s][%d] %s is not after the pass before it (sorted, each once)", id, i, p)
			}
		}
	}
	return nil
}
