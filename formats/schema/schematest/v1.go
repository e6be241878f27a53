// Package schematest holds the row types of older dataset formats, for
// tests that write files as an older infohash did and check that today's
// readers migrate or read them.
package schematest

import "github.com/infohash/infohash/formats/schema"

// StateV1 is the state row of dataset format 1: schema.State without
// backoff_step, bad_metadata, reactivated_at and avoid_peers (see
// formats/dataset/migrate.go).
type StateV1 struct {
	InfoHash       schema.Hash `parquet:"info_hash"`
	InfoHashV2     []byte      `parquet:"info_hash_v2,optional"`
	HashType       int8        `parquet:"hash_type,int(8)"`
	FirstSeen      int64       `parquet:"first_seen,timestamp(millisecond)"`
	LastSeen       int64       `parquet:"last_seen,timestamp(millisecond)"`
	SeenCount      int64       `parquet:"seen_count"`
	LastSource     string      `parquet:"last_source,dict"`
	Activity       float64     `parquet:"activity"`
	MetadataStatus string      `parquet:"metadata_status,dict"`
	Attempts       int32       `parquet:"attempts"`
	LastAttempt    int64       `parquet:"last_attempt,optional,timestamp(millisecond)"`
	LastFailure    string      `parquet:"last_failure,optional,dict"`
	NextRetry      int64       `parquet:"next_retry,optional,timestamp(millisecond)"`
	LeaseID        string      `parquet:"lease_id,optional"`
	LeaseUntil     int64       `parquet:"lease_until,optional,timestamp(millisecond)"`
	Tier           string      `parquet:"tier,dict"`
}

// StateV5 is the state row of dataset formats 3 to 5: schema.State
// without peers (see formats/dataset/migrate.go).
type StateV5 struct {
	InfoHash       schema.Hash `parquet:"info_hash"`
	InfoHashV2     []byte      `parquet:"info_hash_v2,optional"`
	HashType       int8        `parquet:"hash_type,int(8)"`
	FirstSeen      int64       `parquet:"first_seen,timestamp(millisecond)"`
	LastSeen       int64       `parquet:"last_seen,timestamp(millisecond)"`
	SeenCount      int64       `parquet:"seen_count"`
	LastSource     string      `parquet:"last_source,dict"`
	Activity       float64     `parquet:"activity"`
	MetadataStatus string      `parquet:"metadata_status,dict"`
	Attempts       int32       `parquet:"attempts"`
	LastAttempt    int64       `parquet:"last_attempt,optional,timestamp(millisecond)"`
	LastFailure    string      `parquet:"last_failure,optional,dict"`
	NextRetry      int64       `parquet:"next_retry,optional,timestamp(millisecond)"`
	LeaseID        string      `parquet:"lease_id,optional"`
	LeaseUntil     int64       `parquet:"lease_until,optional,timestamp(millisecond)"`
	Tier           string      `parquet:"tier,dict"`
	BackoffStep    int32       `parquet:"backoff_step"`
	BadMetadata    int32       `parquet:"bad_metadata"`
	Reactivated    int64       `parquet:"reactivated_at,optional,timestamp(millisecond)"`
	AvoidPeers     []string    `parquet:"avoid_peers,list"`
}

// StateV8 is the state row of dataset formats 6 to 8: schema.State
// without first_source and last_failure_at.
type StateV8 struct {
	StateV5
	Peers []string `parquet:"peers,list"`
}

// StateV11 is the state row of dataset formats 10 and 11, which fetch's
// old check of a v2 claim may have damaged (the migration to format 12
// repairs it).
type StateV11 struct {
	StateV8
	FirstSource   string `parquet:"first_source,optional,dict"`
	LastFailureAt int64  `parquet:"last_failure_at,optional,timestamp(millisecond)"`
}
