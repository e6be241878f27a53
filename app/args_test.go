package app

import (
	"reflect"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestReorderArgs(t *testing.T) {
	a := &cli.App{Commands: []*cli.Command{{Name: "dedup", Flags: []cli.Flag{
		&cli.StringFlag{Name: "data"}, &cli.BoolFlag{Name: "debug"}, &cli.StringFlag{Name: "now"}}}}}
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"flags first", []string{"ih", "dedup", "--data", "D", "in.parquet"}, []string{"ih", "dedup", "--data", "D", "--", "in.parquet"}},
		{"flags after", []string{"ih", "dedup", "in.parquet", "--data", "D"}, []string{"ih", "dedup", "--data", "D", "--", "in.parquet"}},
		{"mixed with bool and =", []string{"ih", "dedup", "a", "--debug", "b", "--now=X", "--data", "D", "-"},
			[]string{"ih", "dedup", "--debug", "--now=X", "--data", "D", "--", "a", "b", "-"}},
		{"double dash", []string{"ih", "dedup", "--data", "D", "--", "--weird"}, []string{"ih", "dedup", "--data", "D", "--", "--weird"}},
		{"unknown command untouched", []string{"ih", "nope", "x", "--y"}, []string{"ih", "nope", "x", "--y"}},
		{"no positionals", []string{"ih", "dedup", "--data", "D"}, []string{"ih", "dedup", "--data", "D"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reorderArgs(a, tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
