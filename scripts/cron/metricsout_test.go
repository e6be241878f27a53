package cron

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/fsutil/fsutiltest"
)

// TestCrawlPassMetricsKeepsOutputs: the pass's own metrics file,
// METRICS_DIR/infohash_crawl_pass.prom, is written as infohash writes
// --metrics-file: through a symbolic link its target is replaced, the
// link kept; a FIFO or device is written in place. It was written aside
// and moved onto the path with mv, which replaced a device, a FIFO or a
// link with a regular file and moved the file into a directory of that
// name. A pass stopped by a usage error (LIMIT=abc) writes it too.
func TestCrawlPassMetricsKeepsOutputs(t *testing.T) {
	for _, o := range fsutiltest.Outputs(t, "infohash_crawl_pass.prom") {
		t.Run(o.Name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "ds")
			log := runPass(t, data, "m1", "1s", 2, "METRICS_DIR="+filepath.Dir(o.Path), "LIMIT=abc")
			if !strings.Contains(log, "LIMIT=abc: want a number") {
				t.Fatalf("the pass did not stop at LIMIT; log:\n%s", log)
			}
			o.Check(t)
			if o.Fails {
				return
			}
			if b := o.Content(t); b != nil && !bytes.Contains(b, []byte("\ninfohash_crawl_pass_exit_status 2\n")) {
				t.Fatalf("wrote %q", b)
			}
		})
	}
}
