package dhtstate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestSaveKeepsOutputs: a state file that is a symbolic link to a file
// has its target written, the link kept (Load reads the target); a
// device, a FIFO, a link to a device or a directory is refused, not
// written, not replaced. Save renamed a temporary file onto the path:
// the link and the device became regular files (capture and fetch
// warned that they could not use the state, then replaced it at exit).
func TestSaveKeepsOutputs(t *testing.T) {
	want := []Entry{{hexID, "127.0.0.1:6881"}}
	for _, o := range fsutiltest.Outputs(t, "out") {
		t.Run(o.Name, func(t *testing.T) {
			refused := o.Fails || o.Direct
			err := Save(o.Path, struct{ Nodes []Entry }{want})
			if (err != nil) != refused {
				t.Fatalf("error %v, want one: %v", err, refused)
			}
			if err != nil && !strings.Contains(err.Error(), o.Path) {
				t.Fatalf("error %q does not name the path", err)
			}
			o.Check(t)
			if refused {
				return
			}
			var v struct{ Nodes []Entry }
			if found, err := Load(o.Path, &v); !found || err != nil || !reflect.DeepEqual(v.Nodes, want) {
				t.Fatalf("read back: found %v, err %v, nodes %v", found, err, v.Nodes)
			}
		})
	}
}
