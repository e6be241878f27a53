package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 rows"}, {1, "1 row"}, {2, "2 rows"}, {-1, "-1 rows"}, {1 << 40, "1099511627776 rows"},
	} {
		if got := Count(tt.n, "row", "rows"); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	if got := Count(int32(1), "job", "jobs"); got != "1 job" {
		t.Errorf("Count(int32 1) = %q", got)
	}
}
