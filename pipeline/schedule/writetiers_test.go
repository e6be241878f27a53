package schedule

import (
	"errors"
	"testing"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/schema"
)

func TestWriteTiers(t *testing.T) {
	row := []schema.State{{SeenCount: 1}}
	boom := errors.New("disk full")
	for _, tc := range []struct {
		name      string
		hot, cold []schema.State
		fail      bool
		wantCold  []bool // per staged file after the kept one: a cold name?
	}{
		{"both", row, row, false, []bool{false, true}},
		{"hot only", row, nil, false, []bool{false}},
		{"cold only", nil, row, false, []bool{true}},
		{"none", nil, nil, false, nil},
		{"write fails", row, row, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept := []dataset.FileInfo{{Name: "kept.parquet"}}
			files, err := WriteTiers(kept, tc.hot, tc.cold, func(name string, rows []schema.State) (dataset.FileInfo, error) {
				if tc.fail {
					return dataset.FileInfo{}, boom
				}
				return dataset.FileInfo{Name: name, Rows: int64(len(rows))}, nil
			})
			if tc.fail {
				if !errors.Is(err, boom) {
					t.Fatalf("err = %v, want the write's", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1+len(tc.wantCold) || files[0].Name != "kept.parquet" {
				t.Fatalf("files %+v", files)
			}
			for i, cold := range tc.wantCold {
				if f := files[1+i]; IsColdFile(f.Name) != cold || f.Rows != 1 {
					t.Errorf("file %d = %+v, want cold %v", i, f, cold)
				}
			}
		})
	}
}
