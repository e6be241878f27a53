package merge

import (
	"context"
	"fmt"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/dataset/datasettest"
	"github.com/infohash/infohash/formats/leases"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// addTables commits torrents, peers, leases and ledger entries into dir.
func addTables(t *testing.T, dir string, tor []schema.Torrent, peers []schema.PeerPenalty, leaseRows []schema.Lease, applied []string) {
	t.Helper()
	d, err := dataset.Open(context.Background(), dir, dataset.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tx, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range tor {
		key := schema.Hex(tr.InfoHash)[:2]
		fi, err := dataset.WriteStaged(tx, dataset.TableTorrents, key, []schema.Torrent{tr})
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(dataset.TableTorrents, key, append(tx.Next().Table(dataset.TableTorrents).Partitions[key], fi))
	}
	if len(peers) > 0 {
		fi, err := dataset.WriteStaged(tx, dataset.TablePeers, "", peers)
		if err != nil {
			t.Fatal(err)
		}
		tx.SetPartition(dataset.TablePeers, "", []dataset.FileInfo{fi})
	}
	if len(leaseRows) > 0 {
		ls := leases.Set{}
		for _, l := range leaseRows {
			ls[l.InfoHash] = l
		}
		if err := leases.Write(tx, ls); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range applied {
		tx.AddApplied(dataset.Applied{ID: id, Name: id})
	}
	if _, err := tx.Commit(context.Background(), dataset.CommitOptions{Writer: "test"}); err != nil {
		t.Fatal(err)
	}
}

func runFromT(t *testing.T, dir, from string, now int64) Stats {
	t.Helper()
	o := DefaultOptions()
	o.Data, o.From, o.Now = dir, from, tm(now)
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("merge --from: %v", err)
	}
	datasettest.NotInUse(t, from) // merge closed the other dataset
	return st
}

func failedAt(t testing.TB, h schema.Hash, seen int64, fails ...int64) schema.State {
	t.Helper()
	st := newHash(h, seen)
	for _, at := range fails {
		if err := schedule.ApplyFailure(schedule.Default(), &st, schema.OutcomeNoPeers, at, false); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestUnion(t *testing.T) {
	h1, h2, h3 := hashAt(0x01, 1), hashAt(0x02, 2), hashAt(0x01, 3)
	info4, h4 := torrentInfo("four")
	info5, h5 := torrentInfo("five")
	a3 := failedAt(t, h3, t0+day, t0+day, t0+2*day)
	b3 := failedAt(t, h3, t0, t0, t0+hour, t0+3*day)
	b3.LastSeen, b3.SeenCount = t0+5*day, 4
	a4, b4 := newHash(h4, t0), newHash(h4, t0)
	schedule.ApplySuccess(&b4, t0+hour)
	a5, b5 := newHash(h5, t0), failedAt(t, h5, t0, t0+day)
	schedule.ApplySuccess(&a5, t0+hour)
	a := makeDataset(t, []schema.State{newHash(h1, t0), a3, a4, a5})
	b := makeDataset(t, []schema.State{newHash(h2, t0), b3, b4, b5})
	addTables(t, a, []schema.Torrent{{InfoHash: h5, HashType: 1, FetchedAt: t0 + hour, ServedBy: "A", Meta: schema.Meta{InfoBytes: info5}}},
		[]schema.PeerPenalty{{Addr: "127.0.0.1:1", Class: "rejected", Until: t0 + 10*day, Failures: 1, LastAt: t0}},
		nil, []string{"obs-a"})
	addTables(t, b, []schema.Torrent{
		{InfoHash: h4, HashType: 1, FetchedAt: t0 + hour, ServedBy: "B", Meta: schema.Meta{InfoBytes: info4}},
		{InfoHash: h5, HashType: 1, FetchedAt: t0, ServedBy: "B", Meta: schema.Meta{InfoBytes: info5}}},
		[]schema.PeerPenalty{
			{Addr: "127.0.0.1:1", Class: "no_extension", Until: t0 + 20*day, Failures: 3, LastAt: t0 - day},
			{Addr: "127.0.0.1:2", Class: "timeout", Until: t0 + 20*day, Failures: 1, LastAt: t0}},
		[]schema.Lease{{InfoHash: h2, LeaseID: "Lb", LeaseUntil: t0 + 30*day}}, []string{"obs-b"})

	st := runFromT(t, a, b, t0+6*day)
	u := st.Union
	if !u.Additive || u.HashesAdded != 1 || u.HashesCombined != 3 || u.TorrentsAdded != 1 || u.PeersCombined != 2 || u.LedgerEntries != 1 {
		t.Fatalf("union stats %+v", u)
	}
	s := stateOf(t, a)
	if len(s) != 5 {
		t.Fatalf("%d hashes after the union, want 5", len(s))
	}
	g3 := s[h3]
	if g3.Attempts != 5 || g3.LastAttempt != b3.LastAttempt || g3.NextRetry != b3.NextRetry || g3.BackoffStep != 3 ||
		g3.FirstSeen != t0 || g3.LastSeen != t0+5*day || g3.SeenCount != 5 {
		t.Errorf("combined failed hash: %+v", g3)
	}
	if s[h4].MetadataStatus != schema.StatusFetched || s[h4].NextRetry != 0 || s[h5].MetadataStatus != schema.StatusFetched {
		t.Errorf("fetched should beat new and failed: %+v / %+v", s[h4], s[h5])
	}
	tor := map[schema.Hash]schema.Torrent{}
	for _, tr := range readTable[schema.Torrent](t, a, dataset.TableTorrents) {
		tor[tr.InfoHash] = tr
	}
	if len(tor) != 2 || tor[h4].ServedBy != "B" || tor[h5].ServedBy != "A" || string(tor[h4].InfoBytes) != string(info4) {
		t.Errorf("torrents after the union: %+v", tor)
	}
	peers := readTable[schema.PeerPenalty](t, a, dataset.TablePeers)
	if len(peers) != 2 || peers[0].Until != t0+20*day || peers[0].Class != "no_extension" || peers[0].Failures != 3 || peers[0].LastAt != t0 {
		t.Errorf("peers after the union: %+v", peers)
	}
	if len(readTable[schema.Lease](t, a, dataset.TableLeases)) != 0 {
		t.Errorf("the other dataset's leases were copied")
	}

	// Again: a no-op.
	before := stateOf(t, a)
	st = runFromT(t, a, b, t0+7*day)
	if !st.Union.AlreadyMerged {
		t.Fatalf("repeat: %+v", st.Union)
	}
	for h, v := range stateOf(t, a) {
		if v.Attempts != before[h].Attempts || v.SeenCount != before[h].SeenCount {
			t.Fatalf("repeating the union changed %x", h[:1])
		}
	}
	// B moves on; its history now overlaps ours (we hold its ledger), so
	// counts take the maximum rather than adding up again.
	addTables(t, b, nil, nil, nil, []string{"obs-b2"})
	st = runFromT(t, a, b, t0+8*day)
	if st.Union.AlreadyMerged || st.Union.Additive {
		t.Fatalf("union with the newer copy: %+v", st.Union)
	}
	if g := stateOf(t, a)[h3]; g.Attempts != 5 || g.SeenCount != 5 {
		t.Errorf("the newer copy double counted: %+v", g)
	}
}

func TestUnionIntoFreshDataset(t *testing.T) {
	h := hashAt(0x77, 1)
	b := makeDataset(t, []schema.State{failedAt(t, h, t0, t0)})
	a := t.TempDir()
	runFromT(t, a, b, t0+day)
	if s := stateOf(t, a); s[h].Attempts != 1 {
		t.Fatalf("restored state: %+v", s)
	}
	o := DefaultOptions()
	o.Data, o.From = a, a
	if _, err := Run(context.Background(), o); err == nil {
		t.Errorf("merging a dataset into itself was accepted")
	}
}

// TestUnionCarriesALedgerInFiles: the other dataset's ledger, most of it
// in its ledger files, joins ours entry by entry, each once.
func TestUnionCarriesALedgerInFiles(t *testing.T) {
	b := makeDataset(t, []schema.State{newHash(hashAt(0x10, 1), t0)})
	var theirs []string
	for i := range 600 {
		theirs = append(theirs, fmt.Sprintf("obs-b-%d", i))
	}
	addTables(t, b, nil, nil, nil, theirs)
	a := makeDataset(t, []schema.State{newHash(hashAt(0x20, 2), t0)})
	addTables(t, a, nil, nil, nil, []string{"obs-a", theirs[7]})

	st := runFromT(t, a, b, t0+day)
	if st.Union.Additive || st.Union.LedgerEntries != len(theirs)-1 {
		t.Fatalf("union stats %+v", st.Union)
	}
	d, m := datasettest.OpenCurrent(t, a)
	defer d.Close()
	all, err := d.LedgerEntries(m)
	if err != nil {
		t.Fatal(err)
	}
	// ours, theirs, and the union itself, each once
	if want := 1 + len(theirs) + 1; len(all) != want || m.LedgerLen() != int64(want) {
		t.Fatalf("ledger after the union: %d entries (manifest says %d), want %d", len(all), m.LedgerLen(), want)
	}
	applied, err := d.AppliedAmong(m, append(theirs, "obs-a"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range append(theirs, "obs-a") {
		if !applied[id] {
			t.Fatalf("%s missing from the ledger after the union", id)
		}
	}
	if len(m.Applied) != 0 {
		t.Fatalf("the manifest holds %d ledger entries", len(m.Applied))
	}
}
