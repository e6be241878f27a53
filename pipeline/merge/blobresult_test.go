package merge

import (
	"encoding/hex"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestBlobResultColumns: blobResult has schema.Result's columns, of the
// same types, but for info_hash, so a column added to Result must be
// added there too.
func TestBlobResultColumns(t *testing.T) {
	want, got := parquet.SchemaOf(schema.Result{}), parquet.SchemaOf(blobResult{})
	if w, g := want.Columns(), got.Columns(); !reflect.DeepEqual(w, g) {
		t.Fatalf("columns differ:\nResult     %v\nblobResult %v", w, g)
	}
	for _, path := range want.Columns() {
		wl, _ := want.Lookup(path...)
		gl, _ := got.Lookup(path...)
		if path[0] == "info_hash" {
			if gl.Node.Type().Kind() != parquet.ByteArray {
				t.Errorf("info_hash is %s, want BYTE_ARRAY", gl.Node.Type().Kind())
			}
			continue
		}
		if wl.Node.Type().Kind() != gl.Node.Type().Kind() || wl.Node.Optional() != gl.Node.Optional() || wl.Node.Repeated() != gl.Node.Repeated() {
			t.Errorf("column %v: %s, want %s", path, gl.Node.Type(), wl.Node.Type())
		}
	}
}

// toBlob is r as DuckDB would rewrite it: the same values, info_hash a
// BLOB of hash.
func toBlob(r schema.Result, hash []byte) blobResult {
	var b blobResult
	bv, rv := reflect.ValueOf(&b).Elem(), reflect.ValueOf(r)
	for i := range bv.NumField() {
		if f := bv.Type().Field(i); f.Name != "InfoHash" {
			bv.Field(i).Set(rv.FieldByName(f.Name))
		}
	}
	b.InfoHash = hash
	return b
}

// TestReadResultsBlobHash: merge reads results whose info_hash is a
// BYTE_ARRAY (a results file DuckDB rewrote) as it reads fetch's own, and
// names the row of a hash that is not 20 bytes: a BLOB holds the hash
// itself, never its hex (a text info_hash of hex: TestInfoHashTextRule).
func TestReadResultsBlobHash(t *testing.T) {
	info, h := torrentInfo("blob")
	ok := schema.Result{InfoHash: h, HashType: schema.HashV1, Attempt: 3, LeaseID: "l", AttemptedAt: 5,
		Outcome: schema.OutcomeOK, Detail: "d", PeersFound: 4, PeersTried: 2, LookupMs: new(int64(6)), ConnectMs: new(int64(0)),
		MetadataMs: new(int64(8)), TotalMs: new(int64(9)), HandshakeMs: new(int64(1)), ExtensionMs: new(int64(2)), VerifyMs: new(int64(3)),
		ServedBy: "127.0.0.1:1", MetadataSize: int64(len(info)),
		PeerFailures: []schema.PeerFailure{{Addr: "127.0.0.1:2", Class: schema.OutcomeRejected, At: 4}},
		ResultMeta: schema.OKMeta(schema.Meta{Name: new("blob"), NameRaw: []byte("blob"), NameUTF8Valid: true, TotalSize: new(int64(42)),
			PieceLength: new(int64(16384)), FileCount: new(int32(1)), Files: []schema.File{{Path: "blob", PathRaw: []byte("blob"), Length: 42}},
			InfoBytes: info})}
	failed := schema.Result{InfoHash: hashAt(1, 2), HashType: schema.HashV1, Attempt: 1, AttemptedAt: 5,
		Outcome: schema.OutcomeNoPeers, Detail: "none"}
	tests := []struct {
		name    string
		rows    []blobResult
		want    []schema.Result
		wantErr string
	}{
		{"20 bytes", []blobResult{toBlob(ok, h[:]), toBlob(failed, failed.InfoHash[:])}, []schema.Result{ok, failed}, ""},
		{"40 hex digits", []blobResult{toBlob(ok, h[:]), toBlob(failed, []byte(hex.EncodeToString(failed.InfoHash[:])))}, nil,
			"merge: IN: row 2: info_hash has 40 bytes, want 20"},
		{"19 bytes", []blobResult{toBlob(ok, h[:]), toBlob(failed, failed.InfoHash[:19])}, nil, "merge: IN: row 2: info_hash has 19 bytes, want 20"},
		{"32 bytes", []blobResult{toBlob(failed, make([]byte, 32))}, nil, "merge: IN: row 1: info_hash has 32 bytes, want 20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "duck.parquet")
			w, err := rowio.Create[blobResult](path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(tt.rows); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, _, err := readResults(input{name: "IN", path: path}, nil)
			if tt.wantErr != "" {
				if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v (exit %d), want bad input %q", err, exitcode.Of(err), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := readResults(input{name: "IN", path: writeResults(t, tt.want)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("read\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}
