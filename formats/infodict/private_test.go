package infodict

import "testing"

// TestPrivate: "private" marks a torrent private when it is an integer
// other than 0, as libtorrent reads it (and anacrolix); Parse took "i1e"
// alone, so a torrent of "private" 2 was stored public though both
// clients take it as private.
func TestPrivate(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        bool
	}{
		{"absent", "", false},
		{"1", "i1e", true},
		{"2", "i2e", true},
		{"negative", "i-1e", true},
		{"0", "i0e", false},
		{"a string", "1:1", false},
		{"a list", "li1ee", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info := "d6:lengthi1e4:name1:x12:piece lengthi16384e"
			if tt.value != "" {
				info += "7:private" + tt.value
			}
			m, err := Parse([]byte(info + "e"))
			if err != nil {
				t.Fatal(err)
			}
			if m.Private != tt.want {
				t.Fatalf("private %v, want %v", m.Private, tt.want)
			}
		})
	}
}
