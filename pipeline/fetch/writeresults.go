package fetch

import (
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// resultBatchBytes bounds the info dictionaries in one batch of results
// handed to the output: a fast run of large metadata must not pile up in
// the writer (256 results of 10 MiB are 2.5 GiB), nor make one Arrow
// record batch of it.
const resultBatchBytes = 16 << 20

// writeResults writes results in batches of up to 256 results or
// resultBatchBytes of info dictionaries, at least once a second. A write
// error goes to onErr with its batch: unless onErr returns nil (a full
// disk: later rows are still tried), it keeps draining without writing
// (so workers never block) and returns it.
func writeResults(results <-chan schema.Result, out resultSink, onErr func([]schema.Result, error) error) error {
	const batch = 256
	buf := make([]schema.Result, 0, batch)
	size := 0 // info dictionary bytes in buf
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var werr error
	flush := func() {
		if len(buf) > 0 && werr == nil {
			if werr = out.Write(buf); werr != nil {
				werr = onErr(buf, werr)
			}
		}
		clear(buf)
		buf, size = buf[:0], 0
	}
	for {
		select {
		case r, ok := <-results:
			if !ok {
				flush()
				return werr
			}
			buf = append(buf, r)
			if size += len(r.InfoBytes); len(buf) == batch || size >= resultBatchBytes {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}
