package schema

import "fmt"

// The checks below say why a value is none of those a state column may
// hold (nil when it is one). Readers of the dataset's state refuse such a
// value as damage, and writers refuse to commit one: read as something
// else (a hash_type of 0 as v1, an unknown status as never fetched) it
// would be carried on silently by every later commit.

// CheckHashType checks a hash_type: 1 (v1) or 2 (v2). It takes the
// column's physical INT32, so that a value an int8 cannot hold is caught
// rather than wrapped.
func CheckHashType(v int32) error {
	if v != int32(HashV1) && v != int32(HashV2) {
		return fmt.Errorf("hash_type %d, want %d or %d", v, HashV1, HashV2)
	}
	return nil
}

// CheckStatus checks a metadata_status: new, fetched or failed.
func CheckStatus(s string) error {
	switch s {
	case StatusNew, StatusFetched, StatusFailed:
		return nil
	}
	return fmt.Errorf("metadata_status %s, want %s, %s or %s", Quote(s), StatusNew, StatusFetched, StatusFailed)
}

// CheckTier checks a tier: hot or cold.
func CheckTier(s string) error {
	if s != TierHot && s != TierCold {
		return fmt.Errorf("tier %s, want %s or %s", Quote(s), TierHot, TierCold)
	}
	return nil
}
