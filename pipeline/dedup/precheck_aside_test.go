package dedup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/internal/exitcode"
)

// A spooled input (stdin, or a leftover of the inbox) that the precheck
// of a run with several inputs finds bad is set aside as the reading of a
// lone input would set it aside: left in the inbox, it would fail the
// precheck of every later run.
func TestPrecheckSetsAsideBadSpool(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "ds")
	good := readBack(t, writeObs(t, dir, genObs(8, 200, 50)))
	_, err := run(t, data, func(o *Options) { o.Stdin = strings.NewReader(string(good[:len(good)-5])) },
		"-", writeObs(t, dir, genObs(9, 10, 10)))
	if err == nil || exitcode.Of(err) != exitcode.Usage || !namesSetAside(err, data) {
		t.Fatalf("err = %v, want bad input set aside", err)
	}
	for i := range 2 { // a later run, twice: with one input, and with two
		ins := []string{writeObs(t, dir, genObs(10, 10, 10))}
		if i == 1 {
			ins = append(ins, writeObs(t, dir, genObs(11, 10, 10)))
		}
		if _, err := run(t, data, nil, ins...); err != nil {
			t.Fatalf("a later run with good input: %v", err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(data, "inbox"))
	if len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".bad") {
		t.Fatalf("inbox holds %v, want the bad input set aside", ents)
	}
}
