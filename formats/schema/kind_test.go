package schema

import (
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestKindOfColumns(t *testing.T) {
	names := func(row any) []string {
		var out []string
		for _, f := range parquet.SchemaOf(row).Fields() {
			out = append(out, f.Name())
		}
		return out
	}
	for _, tt := range []struct {
		row  any
		want string
	}{
		{Observation{}, "observations"},
		{Job{}, "jobs"},
		{Result{}, "results"},
		{State{}, "state"},
		{Torrent{}, "torrents"},
		{struct {
			InfoHash Hash `parquet:"info_hash"`
		}{}, ""},
	} {
		if got := KindOfColumns(names(tt.row)); got != tt.want {
			t.Errorf("%T: got %q, want %q", tt.row, got, tt.want)
		}
	}
}
