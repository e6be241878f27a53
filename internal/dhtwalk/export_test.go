package dhtwalk

import (
	"github.com/anacrolix/dht/v2"
	"github.com/anacrolix/dht/v2/traversal"
)

// NewWalk, Run and Op open a walk's steps to the external tests: its
// operation started with no node, then watched for its end.
func NewWalk(s *dht.Server, ih [20]byte) *Walk { return newWalk(s, ih) }

func (w *Walk) Run(added int) { w.run(added) }

func (w *Walk) Op() *traversal.Operation { return w.op }
