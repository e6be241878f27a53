package dhtboot

import (
	"net"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := map[string]struct {
		in   []string
		want []string
	}{
		"none given":  {nil, nil},
		"empty":       {[]string{""}, nil},
		"one":         {[]string{"127.0.0.1:1"}, []string{"127.0.0.1:1"}},
		"repeated":    {[]string{"127.0.0.1:1", "127.0.0.1:2"}, []string{"127.0.0.1:1", "127.0.0.1:2"}},
		"commas":      {[]string{"127.0.0.1:1,127.0.0.1:2"}, []string{"127.0.0.1:1", "127.0.0.1:2"}},
		"both":        {[]string{"127.0.0.1:1, 127.0.0.1:2", " 127.0.0.1:3 "}, []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}},
		"empty items": {[]string{",127.0.0.1:1,,", ""}, []string{"127.0.0.1:1"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Parse(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestDefault checks the list's form only: nothing here contacts it.
func TestDefault(t *testing.T) {
	d := Default()
	if len(d) == 0 {
		t.Fatal("no default routers")
	}
	seen := map[string]bool{}
	for _, hp := range d {
		if _, _, err := net.SplitHostPort(hp); err != nil || seen[hp] {
			t.Errorf("%q: %v (or listed twice)", hp, err)
		}
		seen[hp] = true
	}
	d[0] = "changed"
	if Default()[0] == "changed" {
		t.Fatal("Default hands out the package's own slice")
	}
	if got := Flag().Value.Value(); !reflect.DeepEqual(got, Default()) {
		t.Fatalf("flag default %q, want %q", got, Default())
	}
}

// TestListenProblem: a --dht-listen that is no HOST:PORT says what is
// wrong with it, quoted as given, and the forms taken ("abc" said only
// "not HOST:PORT", and fetch's "address abc: missing port in address");
// an empty host, port 0 and a name pass.
func TestListenProblem(t *testing.T) {
	const forms = " (such as :6881 for every address, or 127.0.0.1:6881)"
	for in, want := range map[string]string{
		"abc":            `"abc": missing port: want HOST:PORT` + forms,
		"127.0.0.1":      `"127.0.0.1": missing port: want HOST:PORT` + forms,
		"":               `"": missing port: want HOST:PORT` + forms,
		"::1":            `"::1": not HOST:PORT: an IPv6 address goes in brackets, [ADDRESS]:PORT`,
		"[::1":           `"[::1": not HOST:PORT` + forms,
		"a:b:c":          `"a:b:c": not HOST:PORT` + forms,
		":x":             `":x": port "x" is not a number from 0 to 65535`,
		":65536":         `":65536": port "65536" is not a number from 0 to 65535`,
		":-1":            `":-1": port "-1" is not a number from 0 to 65535`,
		":6881":          "",
		"127.0.0.1:0":    "",
		"localhost:6881": "",
		"[::1]:65535":    "",
	} {
		if got := ListenProblem(in); got != want {
			t.Errorf("ListenProblem(%q) = %q, want %q", in, got, want)
		}
	}
}
