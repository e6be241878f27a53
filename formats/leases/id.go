package leases

import "github.com/infohash/infohash/formats/dataset"

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
	_, ds := dataset.SplitLeaseID(leaseID)
	return ds
}

// Pass returns the pass (16 hex digits) of a lease ID of ID's form, and
// "" for any other.
func Pass(leaseID string) string {
	pass, _ := dataset.SplitLeaseID(leaseID)
	return pass
}
