// Package schema holds the row types that flow between infohash's stages:
// observations (capture → dedup), the durable hash state (dedup, merge,
// plan-retries), retry jobs (plan-retries → fetch), fetch results
// (fetch → merge), fetched torrents and peer penalties.
//
// The Parquet column names and types declared by the struct tags are the
// contract that later stages, tests and DuckDB users rely on. Conventions:
//
//   - info_hash is FIXED_LEN_BYTE_ARRAY(20). A v2 (BEP 52) hash is truncated
//     to 20 bytes as the DHT does; its full 32 bytes go to info_hash_v2.
//   - Timestamps are int64 milliseconds since the Unix epoch, UTC, written
//     with the TIMESTAMP(MILLIS, UTC) logical type. An optional timestamp
//     column stores 0 as null ("unknown").
//   - Null means unknown. An optional column of a value type (string,
//     int64, []byte) stores its zero value as null, so it is used only
//     where the zero is never a known value (a timestamp, an address, a
//     failure class). Where it can be (a torrent's name, size, file
//     count) the field is a pointer, nil alone being null, and an
//     optional []byte whose empty value is known (name_raw) keeps nil
//     for null and a non-nil empty slice for empty (rowio reads it so).
package schema
