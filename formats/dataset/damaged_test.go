package dataset_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/schema"
)

// TestDamagedFooterOfEveryTable: a flipped bit that renames a column in
// the footer of a file of any table, an optional column included, is an
// error naming the file, not a column of nulls or zeros: the footer's
// checksum in the manifest catches it before the footer is decoded (the
// column checks, which caught it before, are statecol's and rowio's
// tests). The ledger's files are checked against their whole CRC-32C
// before they are parsed, which catches it first.
func TestDamagedFooterOfEveryTable(t *testing.T) {
	h := schema.Hash{0x42, 1}
	for _, tt := range []struct {
		table, key, column string
		stage              func(tx *dataset.Tx) (dataset.FileInfo, error)
		read               func(d *dataset.Dataset, m *dataset.Manifest) error
		want               string
	}{
		{dataset.TableState, "42", "seen_count", func(tx *dataset.Tx) (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TableState, "42", []schema.State{{InfoHash: h, HashType: 1, MetadataStatus: "new", Tier: "hot"}})
		}, func(d *dataset.Dataset, m *dataset.Manifest) error {
			_, err := dataset.ReadPartition[schema.State](d, m.Table(dataset.TableState), "42")
			return err
		}, "footer CRC-32C"},
		{dataset.TableTorrents, "42", "info_bytes", func(tx *dataset.Tx) (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TableTorrents, "42", []schema.Torrent{{InfoHash: h, HashType: 1,
				Meta: schema.Meta{Name: new("x"), InfoBytes: []byte("d1:xi0ee")}}})
		}, func(d *dataset.Dataset, m *dataset.Manifest) error {
			_, err := dataset.ReadPartition[schema.Torrent](d, m.Table(dataset.TableTorrents), "42")
			return err
		}, "footer CRC-32C"},
		{dataset.TablePeers, "", "until", func(tx *dataset.Tx) (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TablePeers, "", []schema.PeerPenalty{{Addr: "127.0.0.1:1", Class: "rejected", Until: 5}})
		}, func(d *dataset.Dataset, m *dataset.Manifest) error {
			_, err := dataset.ReadPartition[schema.PeerPenalty](d, m.Table(dataset.TablePeers), "")
			return err
		}, "footer CRC-32C"},
		{dataset.TableLeases, "", "planned_at", func(tx *dataset.Tx) (dataset.FileInfo, error) {
			return dataset.WriteStaged(tx, dataset.TableLeases, "", []schema.Lease{{InfoHash: h, LeaseID: "L", LeaseUntil: 5, Reason: "new", PlannedAt: 1}})
		}, func(d *dataset.Dataset, m *dataset.Manifest) error {
			_, err := dataset.ReadPartition[schema.Lease](d, m.Table(dataset.TableLeases), "")
			return err
		}, "footer CRC-32C"},
		{dataset.TableLedger, "", "name", nil, func(d *dataset.Dataset, m *dataset.Manifest) error {
			_, err := d.LedgerEntries(m)
			return err
		}, "the manifest says"},
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
			if tt.stage != nil {
				fi, err := tt.stage(tx)
				if err != nil {
					t.Fatal(err)
				}
				tx.SetPartition(tt.table, tt.key, []dataset.FileInfo{fi})
			}
			tx.AddApplied(dataset.Applied{ID: "a1", Name: "in.txt", Rows: 1, At: time.Now()})
			m, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"})
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.read(d, m); err != nil {
				t.Fatalf("reading the intact file: %v", err)
			}
			tb := m.Table(tt.table)
			path := d.FilePath(tb, tt.key, tb.Partitions[tt.key][0])
			datasettest.RenameInFooter(t, path, tt.column, 0)
			err = tt.read(d, m)
			if err == nil || !strings.Contains(err.Error(), path+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("reading the damaged file: %v\nwant %s: …%s", err, path, tt.want)
			}
		})
	}
}
