package fetch

import (
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// plan-retries hands fetch, once per jobs file, the endpoints penalised in
// the dataset's peers table (schema.AvoidPeersKey in the file's metadata):
// fetch skips them for every job, as it skips a job's own avoid_peers, so
// that a peer found without BEP 10 for one hash is not dialled again for
// every other hash while its penalty lasts. Skipped peers count in
// peers_avoided.

// metadataSource is a jobs input with file-level metadata (rowio.Reader).
type metadataSource interface {
	Metadata(key string) (string, bool)
}

// jobsAvoidList appends the avoid list of the jobs input in (none for a
// file without one, such as a plain hash list) to ps.
func jobsAvoidList(in metadataSource, ps []schema.AvoidedPeer) ([]schema.AvoidedPeer, error) {
	text, ok := in.Metadata(schema.AvoidPeersKey)
	if !ok {
		return ps, nil
	}
	listed, err := schema.DecodeAvoidPeers(text)
	if err != nil {
		return ps, err
	}
	return append(ps, listed...), nil
}

// avoidSet maps endpoints skipped for every job (canonical, see
// canonicalAddr) to the end of their penalty.
type avoidSet map[string]time.Time

func newAvoidSet(ps []schema.AvoidedPeer) avoidSet {
	s := make(avoidSet, len(ps))
	for _, p := range ps {
		a, until := canonicalAddr(p.Addr), schema.Time(p.Until)
		if until.After(s[a]) {
			s[a] = until
		}
	}
	return s
}

// skips reports whether endpoint addr (canonical) is still penalised at
// now: a penalty that ends during a long run stops being avoided then.
func (s avoidSet) skips(addr string, now time.Time) bool {
	until, ok := s[addr]
	return ok && now.Before(until)
}
