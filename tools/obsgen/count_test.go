package obsgen

import "testing"

func TestParseCount(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "200000", want: 200000},
		{in: "200k", want: 200_000},
		{in: "10M", want: 10_000_000},
		{in: "1.5M", want: 1_500_000},
		{in: "1G", want: 1_000_000_000},
		{in: " 3B ", want: 3_000_000_000},
		{in: "0", want: 0},
		{in: "", bad: true},
		{in: "M", bad: true},
		{in: "-5", bad: true},
		{in: "-1M", bad: true},
		{in: "1e3k", bad: true},
		{in: "NaNM", bad: true},
		{in: "infM", bad: true},
		{in: "10X", bad: true},
		{in: "99999999999G", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCount(tc.in)
			if tc.bad {
				if err == nil {
					t.Fatalf("accepted, got %d", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestParseDistinct(t *testing.T) {
	tests := []struct {
		in   string
		rows int64
		want int64
		bad  bool
	}{
		{in: "20%", rows: 10_000_000, want: 2_000_000},
		{in: "100%", rows: 7, want: 7},
		{in: "0.001%", rows: 10, want: 1},
		{in: "5k", rows: 1_000_000, want: 5_000},
		{in: "0%", rows: 10, bad: true},
		{in: "101%", rows: 10, bad: true},
		{in: "x%", rows: 10, bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDistinct(tc.in, tc.rows)
			if tc.bad {
				if err == nil {
					t.Fatalf("accepted, got %d", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func FuzzParseCount(f *testing.F) {
	for _, s := range []string{"1", "10M", "1.5k", "3B", "", "-1", "1e9G", "20%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseCount(s)
		if err == nil && n < 0 {
			t.Fatalf("%q: negative count %d", s, n)
		}
		d, err := ParseDistinct(s, 1000)
		if err == nil && d < 0 {
			t.Fatalf("%q: negative distinct %d", s, d)
		}
	})
}
