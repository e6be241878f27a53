package leases

import (
	"strings"

	"github.com/infohash/infohash/formats/dataset"
)

// ID names the leases of one plan-retries pass of the dataset named
// datasetID (dataset.Manifest.DatasetID): "L", the pass's 16 hex digits,
// "-" and the dataset's id, so that a result carries the dataset its job
// was planned for (Dataset). A dataset without an id (readers of format 7)
// gets the older form, "L" and 16 hex digits.
func ID(pass, datasetID string) string {
	if datasetID == "" {
		return "L" + pass
	}
	return "L" + pass + "-" + datasetID
}

// Dataset returns the id of the dataset a lease ID of ID's form names,
// and "" for any other lease ID: the older form (plan-retries before
// format 8), null, or one no plan-retries wrote.
func Dataset(leaseID string) string {
	pass, ds, ok := strings.Cut(leaseID, "-")
	if !ok || len(pass) != 17 || pass[0] != 'L' || !dataset.ValidDatasetID(pass[1:]) || !dataset.ValidDatasetID(ds) {
		return ""
	}
	return ds
}
