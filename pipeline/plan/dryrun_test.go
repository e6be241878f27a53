package plan

import (
	"context"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// TestNoOutputOnlyForADryRun: Options.Output "" (plan-retries --limit 0
// without -o) plans as a run with an output would, writes nothing and
// delivers nothing; with a Limit above 0 it is bad input (exit 2), before
// the dataset is opened.
func TestNoOutputOnlyForADryRun(t *testing.T) {
	dir := makeDataset(t, []schema.State{newHash(hashAt(0x10, 1), ms(t0)), newHash(hashAt(0x20, 2), ms(t0))}, nil)
	for _, tt := range []struct {
		name  string
		limit int
		code  int // exit status of the error; 0: none
	}{
		{"dry run", 0, 0},
		{"limit 5", 5, exitcode.Usage},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Data, o.Now, o.Limit, o.Output, o.Stdout = dir, t0.Add(time.Minute), tt.limit, "", nil
			st, err := Run(context.Background(), o)
			if exitcode.Of(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d", exitcode.Of(err), err, tt.code)
			}
			if tt.code == 0 && (st.Due != 2 || st.Planned != 0) {
				t.Errorf("due %d, planned %d; want 2 due, none planned", st.Due, st.Planned)
			}
		})
	}
}
