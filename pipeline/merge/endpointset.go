package merge

import "slices"

// endpointSet is a set of endpoints checked by a scan while it holds a
// few (what a hash's lists hold: a scan of 2 x maxAvoid beat a map), by
// a map past that: a results row's peer_failures have no bound of their
// own (fetch tries every peer it finds until --timeout), and a check by
// scan was quadratic in them.
type endpointSet struct {
	few  []string
	many map[string]bool
}

func (s *endpointSet) has(x string) bool {
	if s.many != nil {
		return s.many[x]
	}
	return slices.Contains(s.few, x)
}

func (s *endpointSet) add(x string) {
	if s.many == nil && len(s.few) < 2*maxAvoid {
		s.few = append(s.few, x)
		return
	}
	if s.many == nil {
		s.many = make(map[string]bool, 4*maxAvoid)
		for _, y := range s.few {
			s.many[y] = true
		}
		s.few = nil
	}
	s.many[x] = true
}
