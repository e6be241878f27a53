package dataset_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestSourcePartitionChecksWholeFile: a file of the peers, leases or
// torrents table with one byte changed where a full read does not notice
// (ReadPartition decodes it without an error) is refused by
// ReadSourcePartition, which a writer that rewrites the table reads it
// with: a *rowio.FooterError naming the file's CRC-32C against the
// manifest's. The intact file reads the same rows both ways.
func TestSourcePartitionChecksWholeFile(t *testing.T) {
	h := schema.Hash{0x42, 1}
	for _, tt := range []struct {
		table, key string
		stage      func(tx *dataset.Tx) (dataset.FileInfo, error)
		read       func(d *dataset.Dataset, t *dataset.Table, key string, source bool) (int, error)
	}{
		{dataset.TablePeers, "", func(tx *dataset.Tx) (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TablePeers, "", []schema.PeerPenalty{{Addr: "127.0.0.1:1", Class: "rejected", Until: 5}})
		}, readRows[schema.PeerPenalty]},
		{dataset.TableLeases, "", func(tx *dataset.Tx) (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TableLeases, "", []schema.Lease{{InfoHash: h, LeaseID: "L", LeaseUntil: 5, Reason: "new", PlannedAt: 1}})
		}, readRows[schema.Lease]},
		{dataset.TableTorrents, "42", func(tx *dataset.Tx) (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TableTorrents, "42", []schema.Torrent{{InfoHash: h, HashType: 1,
				Meta: schema.Meta{Name: new("x"), InfoBytes: []byte("d1:xi0ee")}}})
		}, readRows[schema.Torrent]},
	} {
		t.Run(tt.table, func(t *testing.T) {
			d, err := dataset.Open(context.Background(), t.TempDir(), dataset.OpenOptions{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			tx, err := d.Begin()
			if err != nil {
				t.Fatal(err)
			}
			fi, err := tt.stage(tx)
			if err != nil {
				t.Fatal(err)
			}
			tx.SetPartition(tt.table, tt.key, []dataset.FileInfo{fi})
			m, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"})
			if err != nil {
				t.Fatal(err)
			}
			tb := m.Table(tt.table)
			for _, source := range []bool{false, true} {
				if n, err := tt.read(d, tb, tt.key, source); err != nil || n != 1 {
					t.Fatalf("reading the intact file (source %v): %d rows, %v", source, n, err)
				}
			}
			path := d.FilePath(tb, tt.key, tb.Partitions[tt.key][0])
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The first byte whose change a full read does not notice.
			damaged := false
			for off := 4; off < len(b)-8 && !damaged; off++ {
				bad := bytes.Clone(b)
				bad[off] ^= 0x01
				if err := os.WriteFile(path, bad, 0o644); err != nil {
					t.Fatal(err)
				}
				_, err := tt.read(d, tb, tt.key, false)
				damaged = err == nil
			}
			if !damaged {
				t.Fatal("a full read notices every changed byte")
			}
			_, err = tt.read(d, tb, tt.key, true)
			if _, ok := errors.AsType[*rowio.FooterError](err); !ok || !strings.Contains(err.Error(), path+": CRC-32C ") {
				t.Fatalf("ReadSourcePartition of the damaged file: %v, want a FooterError naming %s's CRC-32C", err, path)
			}
		})
	}
}

// readRows reads partition key of t with ReadPartition, or with
// ReadSourcePartition (source), and returns its row count.
func readRows[T any](d *dataset.Dataset, t *dataset.Table, key string, source bool) (int, error) {
	read := dataset.ReadPartition[T]
	if source {
		read = dataset.ReadSourcePartition[T]
	}
	rows, err := read(d, t, key)
	return len(rows), err
}
