package merge

import (
	"errors"
	"fmt"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/textenc"
)

// blobResult is a result row of a Parquet file whose info_hash is a plain
// BYTE_ARRAY: what DuckDB writes when it rewrites a results file (a BLOB
// column), where fetch writes FIXED_LEN_BYTE_ARRAY(20). Its other columns
// are schema.Result's (TestBlobResultColumns keeps them so).
type blobResult struct {
	InfoHash     []byte               `parquet:"info_hash"`
	InfoHashV2   []byte               `parquet:"info_hash_v2,optional"`
	HashType     int8                 `parquet:"hash_type,int(8)"`
	Attempt      int32                `parquet:"attempt"`
	LeaseID      string               `parquet:"lease_id,optional"`
	AttemptedAt  int64                `parquet:"attempted_at,timestamp(millisecond)"`
	Outcome      string               `parquet:"outcome,dict"`
	Detail       string               `parquet:"detail,optional"`
	PeersFound   int32                `parquet:"peers_found"`
	PeersTried   int32                `parquet:"peers_tried"`
	PeerFailures []schema.PeerFailure `parquet:"peer_failures,list"`
	LookupMs     *int64               `parquet:"lookup_ms,optional"`
	ConnectMs    *int64               `parquet:"connect_ms,optional"`
	MetadataMs   *int64               `parquet:"metadata_ms,optional"`
	TotalMs      *int64               `parquet:"total_ms,optional"`
	ServedBy     string               `parquet:"served_by,optional"`
	MetadataSize int64                `parquet:"metadata_size,optional"`
	schema.ResultMeta
	HandshakeMs *int64 `parquet:"handshake_ms,optional"`
	ExtensionMs *int64 `parquet:"extension_ms,optional"`
	VerifyMs    *int64 `parquet:"verify_ms,optional"`
	RetryAfter  int64  `parquet:"retry_after,optional,timestamp(millisecond)"`
}

// result converts b, whose info_hash is of a column of string type text
// ("" for bytes: a BLOB, a binary), read by the rule dedup and fetch read
// one by (textenc.HashValue): text is 40 hex digits (either case: a
// results file rewritten with lower(hex(info_hash)), the form of the text
// exports), bytes the hash's 20. A result keys a v2 hash by its first 20
// bytes (its full hash is in info_hash_v2): 64 digits or 32 bytes are
// refused. merge took 20 characters of text as the hash's bytes, and 40
// bytes of a BLOB as its hex.
func (b *blobResult) result(text string) (schema.Result, error) {
	r := schema.Result{InfoHashV2: b.InfoHashV2, HashType: b.HashType, Attempt: b.Attempt, LeaseID: b.LeaseID,
		AttemptedAt: b.AttemptedAt, Outcome: b.Outcome, Detail: b.Detail, PeersFound: b.PeersFound,
		PeersTried: b.PeersTried, PeerFailures: b.PeerFailures, LookupMs: b.LookupMs,
		ConnectMs: b.ConnectMs, MetadataMs: b.MetadataMs, TotalMs: b.TotalMs, ServedBy: b.ServedBy,
		MetadataSize: b.MetadataSize, ResultMeta: b.ResultMeta, HandshakeMs: b.HandshakeMs, ExtensionMs: b.ExtensionMs,
		VerifyMs: b.VerifyMs, RetryAfter: b.RetryAfter}
	var h [32]byte
	if n, msg := textenc.HashValue(&h, "info_hash", text, b.InfoHash, false); n == 0 {
		return r, errors.New(msg)
	}
	copy(r.InfoHash[:], h[:])
	return r, nil
}

// resultSource reads results; blobResults adapts a reader of blobResult
// rows to it.
type resultSource interface {
	Read([]schema.Result) (int, error)
	Close() error
}

type blobResults struct {
	name string // the input as named, for errors
	text string // info_hash's string type, "" for bytes (blobResult.result)
	r    *rowio.Reader[blobResult]
	buf  []blobResult
	n    int // rows returned so far
	err  error
}

// Read converts the next rows; a row whose info_hash is not 20 bytes
// long fails the input, naming the row (counted from 1, as
// decodeResults counts).
func (b *blobResults) Read(out []schema.Result) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if cap(b.buf) < len(out) {
		b.buf = make([]blobResult, len(out))
	}
	n, err := b.r.Read(b.buf[:len(out)])
	for i := range b.buf[:n] {
		r, cerr := b.buf[i].result(b.text)
		if cerr != nil {
			b.err = fmt.Errorf("%s: row %d: %w", b.name, b.n+i+1, cerr)
			b.n += i
			return i, b.err
		}
		out[i] = r
	}
	clear(b.buf[:n]) // out holds the rows now: their metadata is the caller's to drop
	b.n += n
	return n, err
}

func (b *blobResults) Close() error { return b.r.Close() }
