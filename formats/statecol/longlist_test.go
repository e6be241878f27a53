package statecol

import (
	"bytes"
	"fmt"
	"testing"
)

// TestWriteStateLongLists: a list of 256 entries or more is written as
// one list (every entry past the first repeats the row), not split into
// rows every 256 entries (a uint8 index wrapped to repetition level 0:
// the file then read "more lists than rows"). The writers keep at most
// 16, but a state row is written as it is read.
func TestWriteStateLongLists(t *testing.T) {
	list := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("10.0.%d.%d:6881", i>>8, i&255)
		}
		return out
	}
	for _, n := range []int{255, 256, 257, 513, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			rows := randomStates(3, 11, false)
			rows[0].AvoidPeers = list(n)
			rows[1].Peers = list(n)
			var buf bytes.Buffer
			if err := WriteState(&buf, rows); err != nil {
				t.Fatal(err)
			}
			checkReadsBack(t, buf.Bytes(), rows)
		})
	}
}
