package schedule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{in: "30m", want: 30 * time.Minute},
		{in: "1d", want: Day},
		{in: "1d12h", want: 36 * time.Hour},
		{in: "2w", want: 14 * Day},
		{in: "1.5h", want: 90 * time.Minute},
		{in: ".5s", want: 500 * time.Millisecond},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "0", want: 0},
		{in: "0s", want: 0},
		{in: "36500d", want: 36500 * Day},
		{in: "", wantErr: "empty"},
		{in: "30", wantErr: "missing unit"},
		{in: "3x", wantErr: `unknown unit "x"`},
		{in: "-1h", wantErr: "expected a number"},
		{in: "1..2h", wantErr: "expected a number"},
		{in: "h", wantErr: "expected a number"},
		{in: "36501d", wantErr: "longer than 100 years"},
		{in: "99999999999999999999d", wantErr: "longer than 100 years"},
		{in: "1d 2h", wantErr: "expected a number"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseDuration(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestDurationString(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{30 * time.Minute, "30m"},
		{8 * time.Hour, "8h"},
		{Day, "1d"},
		{7 * Day, "7d"},
		{36*time.Hour + 90*time.Second, "1d12h1m30s"},
		{1500 * time.Millisecond, "1s500ms"},
		{-time.Hour, "-1h"},
	}
	for _, tt := range tests {
		if got := Duration(tt.d).String(); got != tt.want {
			t.Errorf("Duration(%v).String() = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	var d Duration
	if err := json.Unmarshal([]byte(`"1440m"`), &d); err != nil || time.Duration(d) != Day {
		t.Fatalf("unmarshal 1440m = %v, %v", d, err)
	}
	b, err := json.Marshal(d)
	if err != nil || string(b) != `"1d"` {
		t.Fatalf("marshal = %s, %v; want \"1d\"", b, err)
	}
	for _, bad := range []string{`5`, `null`, `"3x"`, `{}`} {
		err := json.Unmarshal([]byte(bad), &d)
		if _, ok := err.(*DurationError); !ok {
			t.Errorf("unmarshal %s: got %v, want a *DurationError", bad, err)
		}
	}
}

// FuzzParseDuration checks that parsing never panics, never yields a
// negative or out-of-range value, and that the canonical text parses back
// to the same duration (to the millisecond the policy cares about).
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30m", "1d12h", "1.5h", ".5s", "0", "2w", "1..2h", "99999999999d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 || d > MaxDuration {
			t.Fatalf("ParseDuration(%q) = %v: out of range", s, d)
		}
		back, err := ParseDuration(Duration(d).String())
		if err != nil || back != d {
			t.Fatalf("%q → %v → %q → %v, %v", s, d, Duration(d).String(), back, err)
		}
	})
}
