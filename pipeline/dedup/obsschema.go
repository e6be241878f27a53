package dedup

import (
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// missingObservedAt is the error for an input whose columns cols lack
// observed_at, Parquet or Arrow: it says what the file is when its columns
// tell (fetch's results, a state file or jobs given to dedup).
func missingObservedAt(cols []string) error {
	if k := schema.KindOfColumns(cols); k != "" {
		return fmt.Errorf("missing column \"observed_at\" (is it %s? dedup takes observations or a hash list)", k)
	}
	return fmt.Errorf("missing column \"observed_at\"")
}

// obsTypes is what dedup reads each Parquet column of observations as,
// for the errors of checkObsSchema (the Arrow path says it in Arrow's
// types, arrowLayoutOf).
var obsTypes = map[string]string{
	"info_hash":    "FIXED_LEN_BYTE_ARRAY(20), BLOB or hex VARCHAR",
	"observed_at":  "a TIMESTAMP or INT64 (epoch ms)",
	"hash_type":    "an integer (1 or 2)",
	"source":       "text or a BLOB (BYTE_ARRAY)", // a plain BYTE_ARRAY is read as text too
	"info_hash_v2": "BLOB, FIXED_LEN_BYTE_ARRAY(32) or hex VARCHAR",
	"peer_port":    "an integer (a port)",
	"node_addr":    `text ("ip:port") or a BLOB (BYTE_ARRAY)`,
}

// obsTypeError says that column name is of type is, which dedup does not
// read, and what it reads (obsTypes).
func obsTypeError(name string, is any) error {
	return fmt.Errorf("column %q is %v, want %s", name, is, obsTypes[name])
}

// checkObsSchema requires info_hash (binary) and observed_at (INT64: a
// TIMESTAMP, or plain epoch ms; or Spark's INT96 timestamp) of pf, and checks the optional columns'
// types; with peers (announced peers are read), peer_port's too
// (checkPeerPort).
func checkObsSchema(pf *parquet.File, peers bool) error {
	s := pf.Schema()
	if k := rowio.NestedKind(s, "info_hash"); k != "" {
		return obsTypeError("info_hash", k)
	}
	ih, ok := s.Lookup("info_hash")
	if !ok {
		return fmt.Errorf("missing column \"info_hash\"")
	}
	if k := ih.Node.Type().Kind(); k != parquet.FixedLenByteArray && k != parquet.ByteArray {
		return obsTypeError("info_hash", k)
	}
	at, ok := s.Lookup("observed_at")
	if k := rowio.NestedKind(s, "observed_at"); k != "" {
		return obsTypeError("observed_at", k)
	}
	for _, c := range obsNames {
		if k := rowio.NestedKind(s, c); k == "REPEATED" {
			return fmt.Errorf("column %q is REPEATED, want one value a row", c)
		}
	}
	if !ok {
		var cols []string
		for _, f := range s.Fields() {
			cols = append(cols, f.Name())
		}
		return missingObservedAt(cols)
	}
	// By its logical type when it has one, but for an integer's (its
	// physical type says more): a DATE is an INT32, a TIME or a DECIMAL an
	// INT32 or an INT64, which was taken for epoch ms (every row then
	// outside 2001..2200, or read as a time it is not). The format stores
	// a TIMESTAMP as an INT64: one stored as an INT32 (a crafted footer),
	// which parquet-go's schema shows as an INT64 (rowio.StoredTypeError), was
	// decoded as one ("corrupt Parquet: ... cannot decode INT64 from input
	// of size 4", or two values read as one).
	if lt := at.Node.Type().LogicalType(); lt != nil && lt.Value != nil {
		switch lt.Value.(type) {
		case *format.TimestampType:
			if err := rowio.StoredTypeError(pf, "observed_at"); err != nil {
				return err
			}
		case *format.IntType:
		default:
			return fmt.Errorf("column \"observed_at\" is %s, want a TIMESTAMP", lt.Value)
		}
	}
	if k := at.Node.Type().Kind(); k == parquet.Int96 {
		// Spark's timestamp: only the column reader reads it (int96.go).
		if _, ok := fastLayout(pf); !ok {
			return fmt.Errorf("column \"observed_at\" is INT96 (a Spark timestamp), read only beside an info_hash of " +
				"FIXED_LEN_BYTE_ARRAY(20) or BLOB, a hash_type of INT32 and an info_hash_v2 BLOB, " +
				"none nested: write it as a TIMESTAMP")
		}
	} else if k != parquet.Int64 {
		if ct := at.Node.Type().ConvertedType(); ct != nil && *ct == deprecated.Date {
			return fmt.Errorf("column \"observed_at\" is DATE, want a TIMESTAMP")
		}
		return obsTypeError("observed_at", k)
	}
	// An optional column that is a LIST, a MAP or a STRUCT has no leaf of
	// its name: it was read as absent (a LIST hash_type [2] as v1, a
	// LIST source as import), or failed as "corrupt Parquet" (a LIST
	// info_hash_v2).
	for _, c := range []string{"hash_type", "source", "info_hash_v2"} {
		if k := rowio.NestedKind(s, c); k != "" {
			return obsTypeError(c, k)
		}
	}
	// An all-null optional column (NULL: pyarrow's null type, stored as
	// an INT32 with no values) holds no value to misread: its nulls read
	// as a null's rows do.
	lookup := func(c string) (parquet.LeafColumn, bool) {
		l, ok := s.Lookup(c)
		return l, ok && !rowio.IsNullColumn(l.Node.Type())
	}
	if src, ok := lookup("source"); ok && src.Node.Type().Kind() != parquet.ByteArray {
		return obsTypeError("source", src.Node.Type().Kind())
	}
	// The optional columns' values would be converted: DOUBLE 2.0 was read
	// as hash_type 20, FLOAT 1.9 and BOOLEAN false as 1, an INT32
	// info_hash_v2 as its 4 bytes.
	if ht, ok := lookup("hash_type"); ok {
		if k := ht.Node.Type().Kind(); k != parquet.Int32 && k != parquet.Int64 {
			return obsTypeError("hash_type", k)
		}
		// DuckDB types the literal 2.0 as DECIMAL(2,1): an INT32 of 20.
		if lt := ht.Node.Type().LogicalType(); lt != nil && lt.Value != nil {
			if _, ok := lt.Value.(*format.IntType); !ok {
				return obsTypeError("hash_type", lt.Value)
			}
		} else if ct := ht.Node.Type().ConvertedType(); ct != nil && *ct == deprecated.Decimal {
			return obsTypeError("hash_type", "DECIMAL")
		}
	}
	if v2, ok := lookup("info_hash_v2"); ok {
		if k := v2.Node.Type().Kind(); k != parquet.ByteArray && k != parquet.FixedLenByteArray {
			return obsTypeError("info_hash_v2", k)
		}
	}
	if peers {
		return checkPeerPort(pf)
	}
	return nil
}

// checkPeerPort checks, for a run that keeps announced peers, the
// columns they are read from: an input with a peer_port column needs it
// flat and an integer, beside a flat node_addr of text (or a BLOB, read as
// text) and a source column (an announced peer is node_addr's IP and
// peer_port of an announce_peer row). Else it is the wrong schema:
//   - a peer_port of a logical type that is no integer's (parquet-go gives
//     a writer's converted type, from before logical types, as one), or of
//     a physical type other than INT32 and INT64: a DATE, TIME, TIMESTAMP
//     or DECIMAL was read as ports by its stored numbers (a DATE's 19000
//     days as port 19000); a FLOAT, DOUBLE, BYTE_ARRAY (text), BOOLEAN or
//     FIXED_LEN_BYTE_ARRAY one was silently not read;
//   - a nested peer_port or node_addr (a STRUCT, a LIST), a node_addr that
//     is no text, a missing node_addr or source: the input's peers were
//     silently not read. capture writes all three columns, so an input
//     lacking one of them beside peer_port is a rewrite that lost it.
//
// A NULL peer_port (all null) names no port: it is not refused, nor is
// an input without peer_port (a hash list's, an import's: no peers).
func checkPeerPort(pf *parquet.File) error {
	s, root := pf.Schema(), pf.Root()
	if root.Column("peer_port") == nil {
		return nil
	}
	if k := rowio.NestedKind(s, "peer_port"); k != "" {
		return obsTypeError("peer_port", k)
	}
	port := root.Column("peer_port")
	if lt := port.Type().LogicalType(); lt != nil && lt.Value != nil {
		switch lt.Value.(type) {
		case *format.IntType:
		case *format.NullType: // all null (pyarrow's null type): no port at all, as Arrow's null
			return nil
		default:
			return obsTypeError("peer_port", lt.Value)
		}
	}
	if k := port.Type().Kind(); k != parquet.Int32 && k != parquet.Int64 {
		return obsTypeError("peer_port", k)
	}
	if k := rowio.NestedKind(s, "node_addr"); k != "" {
		return obsTypeError("node_addr", k)
	}
	addr := root.Column("node_addr")
	if addr == nil {
		return errNoNodeAddr
	}
	if k := addr.Type().Kind(); k != parquet.ByteArray {
		return obsTypeError("node_addr", k)
	}
	if root.Column("source") == nil {
		return errNoSource
	}
	return nil
}

// The errors of an input whose peer_port has no node_addr or no source
// column beside it, when the run keeps announced peers (checkPeerPort,
// arrowPortTypeError).
var (
	errNoNodeAddr = errors.New(`missing column "node_addr" beside peer_port: --announced-peers reads an announced ` +
		`peer as node_addr's IP ("ip:port" text, as capture writes it) with peer_port`)
	errNoSource = errors.New(`missing column "source" beside peer_port: --announced-peers reads the peers of the ` +
		`announce_peer rows, which source tells`)
)
