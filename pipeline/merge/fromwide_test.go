package merge

import (
	"context"
	"io"
	"math"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// wideTorrent is schema.Torrent as another tool may write it: the same
// physical types, but hash_type a plain INT32, file_count a UINTEGER and
// metadata_size a UBIGINT.
type wideTorrent struct {
	InfoHash      schema.Hash   `parquet:"info_hash"`
	HashType      int32         `parquet:"hash_type"`
	FetchedAt     int64         `parquet:"fetched_at,timestamp(millisecond)"`
	ServedBy      string        `parquet:"served_by,optional"`
	MetadataSize  uint64        `parquet:"metadata_size"`
	Name          *string       `parquet:"name,optional"`
	NameRaw       []byte        `parquet:"name_raw,optional"`
	NameUTF8Valid bool          `parquet:"name_utf8_valid"`
	TotalSize     *int64        `parquet:"total_size,optional"`
	PieceLength   *int64        `parquet:"piece_length,optional"`
	FileCount     *uint32       `parquet:"file_count,optional"`
	Files         []schema.File `parquet:"files,list"`
	Private       bool          `parquet:"private"`
	InfoBytes     []byte        `parquet:"info_bytes,optional"`
}

// TestFromWideTorrents: merge --from reads the other dataset's torrents
// by value whatever integer types its files use: a hash_type of 257 is
// refused, not read as its low byte (1, a valid v1 hash); a file_count
// past int32 is refused, not read as its bits (-1); so is a metadata_size
// past int64. Bad input naming the file, nothing committed; a row whose
// values fit is unioned.
func TestFromWideTorrents(t *testing.T) {
	info, h := torrentInfo("wide")
	hex := schema.Hex(h)
	tor := func(f func(*wideTorrent)) wideTorrent {
		w := wideTorrent{InfoHash: h, HashType: 1, FetchedAt: t0 + hour, ServedBy: "127.0.0.1:1",
			MetadataSize: uint64(len(info)), FileCount: new(uint32(1)), InfoBytes: info}
		f(&w)
		return w
	}
	tests := []struct {
		name string
		row  wideTorrent
		want string // after "merge --from: FILE: ", "" to be unioned
	}{
		{"values that fit", tor(func(*wideTorrent) {}), ""},
		{"hash_type 257", tor(func(w *wideTorrent) { w.HashType = 257 }), `column "hash_type" row 1: 257 is outside int8`},
		{"hash_type -255", tor(func(w *wideTorrent) { w.HashType = -255 }), `column "hash_type" row 1: -255 is outside int8`},
		{"file_count 2^32-1", tor(func(w *wideTorrent) { w.FileCount = new(uint32(math.MaxUint32)) }),
			`column "file_count" row 1: 4294967295 is outside int32`},
		{"file_count 2^31", tor(func(w *wideTorrent) { w.FileCount = new(uint32(1 << 31)) }),
			`column "file_count" row 1: 2147483648 is outside int32`},
		{"metadata_size 2^64-1", tor(func(w *wideTorrent) { w.MetadataSize = math.MaxUint64 }),
			`column "metadata_size" row 1: 18446744073709551615 is more than an int64 holds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := makeDataset(t, []schema.State{newHash(h, t0)})
			datasettest.Commit(t, other, func(tx *dataset.Tx) {
				key := hex[:2]
				fi, err := dataset.WriteStagedWith(tx, dataset.TableTorrents, key, dataset.NewName(".parquet"), 1, func(out io.Writer) error {
					w := parquet.NewGenericWriter[wideTorrent](out)
					if _, err := w.Write([]wideTorrent{tt.row}); err != nil {
						return err
					}
					return w.Close()
				})
				if err != nil {
					t.Fatal(err)
				}
				tx.SetPartition(dataset.TableTorrents, key, []dataset.FileInfo{fi})
			})
			fromRefused(t, other, "torrents/v/*/prefix="+hex[:2]+"/*.parquet", tt.want, true, 64<<10)
		})
	}
}

// widePenalty is schema.PeerPenalty with failures a UINTEGER.
type widePenalty struct {
	Addr     string `parquet:"addr"`
	Class    string `parquet:"class,dict"`
	Until    int64  `parquet:"until,timestamp(millisecond)"`
	Failures uint32 `parquet:"failures"`
	LastAt   int64  `parquet:"last_at,timestamp(millisecond)"`
}

// TestFromWidePeers: the other dataset's peers table is read by value
// too: a failures count past int32 is bad input naming the file, not -1.
func TestFromWidePeers(t *testing.T) {
	tests := []struct {
		name     string
		failures uint32
		want     string
	}{
		{"failures that fit", math.MaxInt32, ""},
		{"failures 2^32-1", math.MaxUint32, `column "failures" row 1: 4294967295 is outside int32`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := makeDataset(t, []schema.State{newHash(hashAt(0x07, 1), t0)})
			row := widePenalty{Addr: "127.0.0.1:1", Class: schema.OutcomeConnectFailed, Until: t0 + 3*hour, Failures: tt.failures, LastAt: t0 + hour}
			datasettest.Commit(t, other, func(tx *dataset.Tx) {
				fi, err := dataset.WriteStagedWith(tx, dataset.TablePeers, "", dataset.NewName(".parquet"), 1, func(out io.Writer) error {
					w := parquet.NewGenericWriter[widePenalty](out)
					if _, err := w.Write([]widePenalty{row}); err != nil {
						return err
					}
					return w.Close()
				})
				if err != nil {
					t.Fatal(err)
				}
				tx.SetPartition(dataset.TablePeers, "", []dataset.FileInfo{fi})
			})
			dir := makeDataset(t, nil)
			before := datasettest.Digests(t, dir)
			_, err := tryFrom(dir, other)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("merge --from: %v", err)
				}
				if got := readTable[schema.PeerPenalty](t, dir, dataset.TablePeers); len(got) != 1 || got[0].Failures != int32(tt.failures) {
					t.Fatalf("peers = %+v, want failures %d", got, tt.failures)
				}
				return
			}
			files, _ := filepath.Glob(filepath.Join(other, "peers", "v", "*", "*.parquet"))
			if len(files) == 0 {
				t.Fatal("the other dataset has no peers file")
			}
			// "peers: ", as for any error reading the other's peers table
			want := "merge --from: peers: " + files[len(files)-1] + ": " + tt.want
			if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v (exit %d)\nwant bad input %s", err, exitcode.Of(err), want)
			}
			if datasettest.Digests(t, dir) != before {
				t.Fatal("the refused union changed the dataset")
			}
		})
	}
}

// tryFrom runs merge --from other into the dataset at dir.
func tryFrom(dir, other string) (Stats, error) {
	o := DefaultOptions()
	o.Data, o.From, o.Now = dir, other, tm(t0+2*hour)
	return Run(context.Background(), o)
}
