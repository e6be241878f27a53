package dataset

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// TestReadFileSurvivesADecoderPanic: testdata/peers-dictionary-overrun.parquet
// is a peers file (of parquet-go's writer, without page checksums) whose
// class dictionary has a string length changed from 14 to 30, which
// passes rowio's checks and makes parquet-go index past the dictionary.
// Reading it is an error of one line naming the file, a CorruptError,
// not a crash; and, the panic being parquet-go's, the same under
// rowio.FailOnOwnPanics, as in the fuzz targets.
func TestReadFileSurvivesADecoderPanic(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "peers-dictionary-overrun.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			if strict {
				rowio.FailOnOwnPanics(t)
			}
			p := filepath.Join(t.TempDir(), "part-1.parquet")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			rows, err := ReadFile[schema.PeerPenalty](p)
			want := p + ": corrupt Parquet: the decoder failed: runtime error: index out of range"
			if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") ||
				!errors.Is(err, rowio.ErrCorrupt) || rows != nil {
				t.Fatalf("got %d rows, %v; want none and %s…", len(rows), err, want)
			}
		})
	}
}
