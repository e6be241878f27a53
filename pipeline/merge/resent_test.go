package merge

import (
	"os"
	"testing"

	"github.com/infohash/infohash/formats/schema"
)

// TestMergePeerPenaltiesResent: peer_penalties counts the penalties a
// run placed or extended, not the peer failures it read: a failure sent
// again (in another input, a cut stream then sent whole, or one whose
// penalty merge --from brought) finds its penalty in place and counts
// none, so the runs add up to what one run of the whole counts. A later failure of an endpoint still penalised
// extends its penalty, and counts.
func TestMergePeerPenaltiesResent(t *testing.T) {
	t.Run("cut stream sent again whole", func(t *testing.T) {
		base := cutDataset(t)
		stream, ends, _ := cutResults(t, base)
		now := t0 + 10*minute
		whole := t.TempDir()
		if err := os.CopyFS(whole, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		once, err := mergeStdin(whole, now, stream)
		if err != nil || once.PeerPenalties == 0 {
			t.Fatalf("the whole stream: %d peer penalties, %v; want some", once.PeerPenalties, err)
		}
		cut, _ := mergeStdin(base, now, stream[:ends[2]+(ends[3]-ends[2])/2])
		rest, err := mergeStdin(base, now, stream)
		if err != nil {
			t.Fatal(err)
		}
		if cut.PeerPenalties+rest.PeerPenalties != once.PeerPenalties {
			t.Fatalf("peer_penalties: cut %d + whole again %d, want %d as the whole stream once",
				cut.PeerPenalties, rest.PeerPenalties, once.PeerPenalties)
		}
	})
	t.Run("merge --from of a dataset that merged part, then the whole", func(t *testing.T) {
		base := cutDataset(t)
		stream, ends, _ := cutResults(t, base)
		now := t0 + 10*minute
		whole, other := t.TempDir(), t.TempDir()
		for _, dir := range []string{whole, other} {
			if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
		}
		once, err := mergeStdin(whole, now, stream)
		if err != nil {
			t.Fatal(err)
		}
		cut, _ := mergeStdin(other, now, stream[:ends[2]+(ends[3]-ends[2])/2])
		if cut.PeerPenalties == 0 {
			t.Fatal("the cut stream penalised no endpoint")
		}
		// The union brings the other side's penalties: the whole stream
		// then places or extends only those of the rows cut off there.
		runFromT(t, base, other, now)
		rest, err := mergeStdin(base, now, stream)
		if err != nil {
			t.Fatal(err)
		}
		if rest.PeerPenalties != once.PeerPenalties-cut.PeerPenalties {
			t.Fatalf("peer_penalties after merge --from: %d, want %d - %d", rest.PeerPenalties, once.PeerPenalties, cut.PeerPenalties)
		}
	})
	t.Run("failure in a second input", func(t *testing.T) {
		dir := makeDataset(t, []schema.State{newHash(hashAt(0x42, 1), t0), newHash(hashAt(0x43, 2), t0)})
		jobs := planJobs(t, dir, t0, 2)
		at := t0 + minute
		pf := func(addr string, at int64) schema.PeerFailure {
			return schema.PeerFailure{Addr: addr, Class: schema.OutcomeNoUTMetadata, At: at}
		}
		first := failure(jobs[0], schema.OutcomeNoUTMetadata, at, pf("127.0.0.1:7001", at))
		if st := runMerge(t, dir, at+minute, writeResults(t, []schema.Result{first})); st.PeerPenalties != 1 {
			t.Fatalf("first input: %d peer penalties, want 1", st.PeerPenalties)
		}
		// The first result again, beside the other job's: its endpoint
		// fails again a minute later (still penalised: extended), and a
		// new endpoint is penalised.
		later := at + minute
		second := failure(jobs[1], schema.OutcomeNoUTMetadata, later, pf("127.0.0.1:7001", later), pf("127.0.0.1:7002", later))
		st := runMerge(t, dir, later+minute, writeResults(t, []schema.Result{first, second}))
		if st.PeerPenalties != 2 || st.InputsSkipped != 0 {
			t.Fatalf("second input: %d peer penalties (%d inputs skipped), want 2: 7001 extended, 7002 placed, the re-sent failure none",
				st.PeerPenalties, st.InputsSkipped)
		}
		// Both again, as a third input with a row of its own: nothing new.
		third := failure(jobs[1], schema.OutcomeNoUTMetadata, later, pf("127.0.0.1:7002", later))
		if st := runMerge(t, dir, later+2*minute, writeResults(t, []schema.Result{first, second, third})); st.PeerPenalties != 0 {
			t.Fatalf("third input: %d peer penalties, want 0 (every failure's penalty in place)", st.PeerPenalties)
		}
	})
}
