package merge

import (
	"slices"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/pipeline/schedule"
)

// TestTooLargeIsThePeersUntilASecondPeerSaysSo: metadata_size is one
// peer's unchecked claim. The first too_large penalises that endpoint and
// retries the hash soon; a second distinct peer claiming it makes it the
// hash's (backoff.too_large, 30 days).
func TestTooLargeIsThePeersUntilASecondPeerSaysSo(t *testing.T) {
	h := hashAt(0x43, 1)
	dir := makeDataset(t, []schema.State{newHash(h, t0)})
	j := planJobs(t, dir, t0, 1)[0]
	at := t0 + minute
	res := failure(j, schema.OutcomeTooLarge, at, schema.PeerFailure{Addr: "127.0.0.1:7001", Class: schema.OutcomeTooLarge, At: at})
	runMerge(t, dir, at+minute, writeResults(t, []schema.Result{res}))
	got := stateOf(t, dir)[h]
	if d := got.NextRetry - at; d < 8*minute || d > 12*minute || got.BackoffStep != 0 {
		t.Fatalf("one peer's too_large: retry after %dm at step %d, want ~10m (soon) at step 0", d/minute, got.BackoffStep)
	}
	peers := readTable[schema.PeerPenalty](t, dir, dataset.TablePeers)
	if len(peers) != 1 || peers[0].Class != schema.OutcomeTooLarge || peers[0].Until != at+7*24*hour {
		t.Fatalf("peers after one too_large: %+v, want 127.0.0.1:7001 penalised for 7 days", peers)
	}
	if !slices.Equal(got.AvoidPeers, []string{"127.0.0.1:7001"}) {
		t.Fatalf("avoid_peers = %v", got.AvoidPeers)
	}

	j = planJobs(t, dir, got.NextRetry, 1)[0]
	at = got.NextRetry + minute
	res = failure(j, schema.OutcomeTooLarge, at, schema.PeerFailure{Addr: "127.0.0.1:7002", Class: schema.OutcomeTooLarge, At: at})
	runMerge(t, dir, at+minute, writeResults(t, []schema.Result{res}))
	got = stateOf(t, dir)[h]
	want := time.Duration(schedule.Default().Delay(schema.OutcomeTooLarge, 0))
	if d := got.NextRetry - at; d < int64(0.8*float64(want.Milliseconds())) || got.BadMetadata != 2 {
		t.Fatalf("a second peer's too_large: retry after %dh (bad_metadata %d), want ~%v", d/hour, got.BadMetadata, want)
	}
}
