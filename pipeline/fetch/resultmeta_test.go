package fetch

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"testing"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/tools/badpeers"
)

// TestOKResultWithoutFiles: a torrent without files (a v1 "files" list
// or a v2 "file tree" that is empty) is ok with files an empty list, not
// null, and false flags set as values; null is for a failure, which
// knows nothing of the torrent (checkResult).
func TestOKResultWithoutFiles(t *testing.T) {
	v1Info := bencode.MustMarshal(map[string]any{"name": "v1", "files": []any{}, "piece length": 16384, "pieces": ""})
	v2Info := bencode.MustMarshal(map[string]any{"meta version": 2, "name": "v2", "piece length": 16384, "file tree": map[string]any{}})
	sum := sha256.Sum256(v2Info)
	v1 := badpeers.Torrent{InfoHash: sha1.Sum(v1Info), Info: v1Info}
	v2 := badpeers.Torrent{InfoHash: [20]byte(sum[:20]), Info: v2Info}
	f := newFetcher(t, testOptions())
	p := startPeer(t, badpeers.Good, v1, v2)
	for _, tt := range []struct {
		name string
		tor  badpeers.Torrent
	}{{"v1 empty files", v1}, {"v2 empty file tree", v2}} {
		t.Run(tt.name, func(t *testing.T) {
			job := schema.Job{InfoHash: tt.tor.InfoHash, Attempt: 1, Peers: []string{p.Addr()}}
			r, ok := f.Fetch(context.Background(), job)
			if !ok || r.Outcome != schema.OutcomeOK {
				t.Fatalf("outcome %s (%s), want ok", r.Outcome, r.Detail)
			}
			checkResult(t, job, r)
			if r.Files == nil || len(r.Files) != 0 || r.FileCount == nil || *r.FileCount != 0 || r.Private == nil || *r.Private {
				t.Errorf("files %#v, file_count %v, private %v; want [], 0, false", r.Files, r.FileCount, r.Private)
			}
		})
	}
}
