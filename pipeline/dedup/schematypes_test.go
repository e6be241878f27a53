package dedup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/rowio/rowiotest"
)

// sourceTyped is an observation whose source column is a T.
type sourceTyped[T any] struct {
	InfoHash   []byte `parquet:"info_hash"`
	ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
	Source     T      `parquet:"source"`
}

// Parquet inputs whose optional hash_type, source or info_hash_v2 column
// is not of a type those columns can be (pandas writes a nullable integer
// column with missing values as DOUBLE) are bad input saying so, by both
// readers. hash_type 2.0 (DOUBLE) was refused as "hash_type 20", 1.9
// (FLOAT) and BOOLEAN false read as v1, text "v1" was "corrupt Parquet",
// and an INT32 info_hash_v2 was read as its 4 bytes. A source that is not
// a BYTE_ARRAY was "want a string", though a BLOB (BYTE_ARRAY without
// the String type) is read as text.
func TestOptionalColumnTypes(t *testing.T) {
	h := make([]byte, 20)
	at := t0.UnixMilli()
	type dbl struct {
		InfoHash   []byte  `parquet:"info_hash"`
		ObservedAt int64   `parquet:"observed_at,timestamp(millisecond)"`
		HashType   float64 `parquet:"hash_type"`
	}
	type flt struct {
		InfoHash   []byte  `parquet:"info_hash"`
		ObservedAt int64   `parquet:"observed_at,timestamp(millisecond)"`
		HashType   float32 `parquet:"hash_type"`
	}
	type boolean struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		HashType   bool   `parquet:"hash_type"`
	}
	type text struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		HashType   string `parquet:"hash_type"`
	}
	type v2int struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		InfoHashV2 int32  `parquet:"info_hash_v2"`
	}
	type decimal struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		HashType   int32  `parquet:"hash_type,decimal(1:2)"`
	}
	// An optional column that is a LIST or a STRUCT was read as absent
	// (hash_type [2] as v1, source as import) or failed as "corrupt
	// Parquet" (info_hash_v2).
	type listType struct {
		InfoHash   []byte  `parquet:"info_hash"`
		ObservedAt int64   `parquet:"observed_at,timestamp(millisecond)"`
		HashType   []int32 `parquet:"hash_type,list"`
	}
	type listSource struct {
		InfoHash   []byte   `parquet:"info_hash"`
		ObservedAt int64    `parquet:"observed_at,timestamp(millisecond)"`
		Source     []string `parquet:"source,list"`
	}
	type named struct {
		Name string `parquet:"name"`
	}
	type listV2 struct {
		InfoHash   []byte   `parquet:"info_hash"`
		ObservedAt int64    `parquet:"observed_at,timestamp(millisecond)"`
		InfoHashV2 [][]byte `parquet:"info_hash_v2,list"`
	}
	type small struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		HashType   int16  `parquet:"hash_type"`
	}
	// observed_at as a DATE (an INT32): it was "INT32, want INT64
	// timestamp", the physical type rather than the logical one.
	type date struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int32  `parquet:"observed_at,date"`
	}
	type time32 struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int32  `parquet:"observed_at,time(millisecond)"`
	}
	type list64 struct { // said as the other observed_at types are
		InfoHash   []byte  `parquet:"info_hash"`
		ObservedAt []int64 `parquet:"observed_at,list"`
	}
	type plain32 struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int32  `parquet:"observed_at"`
	}
	// A TIMESTAMP stored as an INT32 (a crafted footer: the format stores
	// one as an INT64), or TIMESTAMP_MILLIS alone (converted: the converted
	// type of a writer older than logical types) on one, was decoded as an
	// INT64, parquet-go's type for it: "corrupt Parquet: ... cannot decode
	// INT64 from input of size 4", not a wrong schema.
	tsOnInt32 := func(converted bool) func(*format.FileMetaData) {
		return rowiotest.Int32Timestamp(t, converted, "observed_at")
	}
	// An INT64 observed_at of another logical type than TIMESTAMP (as
	// DuckDB writes TIME and DECIMAL(18,3)) passed for epoch ms: every
	// row was then "outside 2001..2200", or read as a time it is not.
	type time64 struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,time(microsecond)"`
	}
	type timeNanos struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,time(nanosecond)"`
	}
	type decimal64 struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,decimal(3:18)"`
	}
	type plain64 struct { // epoch ms, as README takes: still read
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at"`
	}
	type unsigned64 struct { // an integer too
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt uint64 `parquet:"observed_at"`
	}
	// A peer_port (beside node_addr and source: read for announced ports)
	// stored as an INT32 or an INT64 of a logical type that is no
	// integer's was read as ports by its stored numbers (a DATE's days).
	type portDate struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
		NodeAddr   string `parquet:"node_addr"`
		PeerPort   int32  `parquet:"peer_port,date"`
	}
	type portTime struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
		NodeAddr   string `parquet:"node_addr"`
		PeerPort   int32  `parquet:"peer_port,time(millisecond)"`
	}
	type portDecimal struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
		NodeAddr   string `parquet:"node_addr"`
		PeerPort   int64  `parquet:"peer_port,decimal(0:18)"`
	}
	type portTimestamp struct {
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
		NodeAddr   string `parquet:"node_addr"`
		PeerPort   int64  `parquet:"peer_port,timestamp(millisecond)"`
	}
	type portSmall struct { // an integer: read
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
		NodeAddr   string `parquet:"node_addr"`
		PeerPort   int32  `parquet:"peer_port,int(16)"`
	}
	type portDateAlone struct { // no node_addr: wrong schema too (TestAnnouncedPeerColumns), its type said first
		InfoHash   []byte `parquet:"info_hash"`
		ObservedAt int64  `parquet:"observed_at,timestamp(millisecond)"`
		Source     string `parquet:"source"`
		PeerPort   int32  `parquet:"peer_port,date"`
	}
	const ann, addr = "announce_peer", "10.0.0.1:1"
	// convertedOnly makes peer_port's type its converted type ct alone, as
	// a writer older than logical types wrote it.
	convertedOnly := func(ct deprecated.ConvertedType) func(*format.FileMetaData) {
		return func(md *format.FileMetaData) {
			for i := range md.Schema {
				if e := &md.Schema[i]; e.Name == "peer_port" {
					e.ConvertedType = thrift.Null[deprecated.ConvertedType]{V: ct, Valid: true}
					e.LogicalType = format.LogicalType{}
					return
				}
			}
			t.Fatal("no column peer_port in the footer")
		}
	}
	dir := t.TempDir()
	tests := []struct {
		name string
		file []byte
		want string // "" for none
	}{
		{"DATE observed_at", writeRowsBytes(t, dir, []date{{h, 19000}}), `column "observed_at" is DATE, want a TIMESTAMP`},
		{"TIME observed_at", writeRowsBytes(t, dir, []time32{{h, 1000}}),
			`column "observed_at" is TIME(isAdjustedToUTC=true,unit=MILLIS), want a TIMESTAMP`},
		{"LIST observed_at", writeRowsBytes(t, dir, []list64{{h, []int64{at}}}),
			`column "observed_at" is a LIST, want a TIMESTAMP or INT64 (epoch ms)`},
		{"INT32 observed_at", writeRowsBytes(t, dir, []plain32{{h, 1000}}),
			`column "observed_at" is INT32, want a TIMESTAMP or INT64 (epoch ms)`},
		{"INT32 TIMESTAMP observed_at", editFooter(t, writeRowsBytes(t, dir, []plain32{{h, 1000}}), tsOnInt32(false)),
			`column "observed_at" is TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS) stored as INT32, want a TIMESTAMP (INT64)`},
		{"INT32 TIMESTAMP_MILLIS observed_at", editFooter(t, writeRowsBytes(t, dir, []plain32{{h, 1000}}), tsOnInt32(true)),
			`column "observed_at" is TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS) stored as INT32, want a TIMESTAMP (INT64)`},
		{"INT64 TIME observed_at", writeRowsBytes(t, dir, []time64{{h, 3_600_000_000}}),
			`column "observed_at" is TIME(isAdjustedToUTC=true,unit=MICROS), want a TIMESTAMP`},
		{"INT64 TIME ms-like observed_at", writeRowsBytes(t, dir, []time64{{h, at}}),
			`column "observed_at" is TIME(isAdjustedToUTC=true,unit=MICROS), want a TIMESTAMP`},
		{"INT64 TIME(NANOS) observed_at", writeRowsBytes(t, dir, []timeNanos{{h, 3_600_000_000_000}}),
			`column "observed_at" is TIME(isAdjustedToUTC=true,unit=NANOS), want a TIMESTAMP`},
		{"INT64 DECIMAL observed_at", writeRowsBytes(t, dir, []decimal64{{h, at * 1000}}),
			`column "observed_at" is DECIMAL(18,3), want a TIMESTAMP`},
		{"INT64 observed_at", writeRowsBytes(t, dir, []plain64{{h, at}}), ""},
		{"UBIGINT observed_at", writeRowsBytes(t, dir, []unsigned64{{h, uint64(at)}}), ""},
		{"DOUBLE hash_type", writeRowsBytes(t, dir, []dbl{{h, at, 1}, {h, at, 2}}), `column "hash_type" is DOUBLE, want an integer (1 or 2)`},
		{"FLOAT hash_type", writeRowsBytes(t, dir, []flt{{h, at, 1.9}}), `column "hash_type" is FLOAT, want an integer (1 or 2)`},
		{"BOOLEAN hash_type", writeRowsBytes(t, dir, []boolean{{h, at, false}}), `column "hash_type" is BOOLEAN, want an integer (1 or 2)`},
		{"text hash_type", writeRowsBytes(t, dir, []text{{h, at, "v1"}}), `column "hash_type" is BYTE_ARRAY, want an integer (1 or 2)`},
		{"INT32 info_hash_v2", writeRowsBytes(t, dir, []v2int{{h, at, 7}}), `column "info_hash_v2" is INT32, want BLOB, FIXED_LEN_BYTE_ARRAY(32) or hex VARCHAR`},
		{"DECIMAL hash_type", writeRowsBytes(t, dir, []decimal{{h, at, 20}}), `column "hash_type" is DECIMAL(2,1), want an integer (1 or 2)`},
		{"INT16 hash_type", writeRowsBytes(t, dir, []small{{h, at, 2}}), ""},
		{"INT32 source", writeRowsBytes(t, dir, []sourceTyped[int32]{{h, at, 1}}), `column "source" is INT32, want text or a BLOB (BYTE_ARRAY)`},
		{"FIXED_LEN_BYTE_ARRAY source", writeRowsBytes(t, dir, []sourceTyped[[6]byte]{{h, at, [6]byte{'i', 'm', 'p', 'o', 'r', 't'}}}),
			`column "source" is FIXED_LEN_BYTE_ARRAY, want text or a BLOB (BYTE_ARRAY)`},
		{"BLOB source", writeRowsBytes(t, dir, []sourceTyped[[]byte]{{h, at, []byte("import")}}), ""},
		{"LIST hash_type", writeRowsBytes(t, dir, []listType{{h, at, []int32{2}}}), `column "hash_type" is a LIST, want an integer (1 or 2)`},
		{"LIST source", writeRowsBytes(t, dir, []listSource{{h, at, []string{"mine"}}}),
			`column "source" is a LIST, want text or a BLOB (BYTE_ARRAY)`},
		{"STRUCT source", writeRowsBytes(t, dir, []sourceTyped[named]{{h, at, named{"import"}}}),
			`column "source" is a STRUCT, want text or a BLOB (BYTE_ARRAY)`},
		{"LIST info_hash_v2", writeRowsBytes(t, dir, []listV2{{h, at, [][]byte{make([]byte, 32)}}}),
			`column "info_hash_v2" is a LIST, want BLOB, FIXED_LEN_BYTE_ARRAY(32) or hex VARCHAR`},
		{"DATE peer_port", writeRowsBytes(t, dir, []portDate{{h, at, ann, addr, 6881}}),
			`column "peer_port" is DATE, want an integer (a port)`},
		{"TIME peer_port", writeRowsBytes(t, dir, []portTime{{h, at, ann, addr, 6881}}),
			`column "peer_port" is TIME(isAdjustedToUTC=true,unit=MILLIS), want an integer (a port)`},
		{"DECIMAL peer_port", writeRowsBytes(t, dir, []portDecimal{{h, at, ann, addr, 6881}}),
			`column "peer_port" is DECIMAL(18,0), want an integer (a port)`},
		{"TIMESTAMP peer_port", writeRowsBytes(t, dir, []portTimestamp{{h, at, ann, addr, 6881}}),
			`column "peer_port" is TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS), want an integer (a port)`},
		{"DATE (converted) peer_port", editFooter(t, writeRowsBytes(t, dir, []portDate{{h, at, ann, addr, 6881}}),
			convertedOnly(deprecated.Date)), `column "peer_port" is DATE, want an integer (a port)`},
		{"DECIMAL (converted) peer_port", editFooter(t, writeRowsBytes(t, dir, []portDecimal{{h, at, ann, addr, 6881}}),
			convertedOnly(deprecated.Decimal)), `column "peer_port" is DECIMAL(18,0), want an integer (a port)`},
		{"TIME_MILLIS (converted) peer_port", editFooter(t, writeRowsBytes(t, dir, []portTime{{h, at, ann, addr, 6881}}),
			convertedOnly(deprecated.TimeMillis)), `column "peer_port" is TIME`},
		{"SMALLINT peer_port", writeRowsBytes(t, dir, []portSmall{{h, at, ann, addr, 6881}}), ""},
		{"DATE peer_port without node_addr", writeRowsBytes(t, dir, []portDateAlone{{h, at, ann, 6881}}),
			`column "peer_port" is DATE, want an integer (a port)`},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".parquet")
		if err := os.WriteFile(p, tt.file, 0o644); err != nil {
			t.Fatal(err)
		}
		eachParquetReader(t, tt.name, func(t *testing.T) {
			err := readAs(t, p, "in.parquet")
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) ||
				!strings.Contains(err.Error(), "in.parquet") || !strings.Contains(err.Error(), rowio.ErrSchema.Error())):
				t.Fatalf("err = %v, want %q (wrong schema)", err, tt.want)
			}
		})
	}
}
