package leases

import "testing"

// TestIDParts: Dataset and Pass read back what ID wrote, and name nothing
// of a lease ID of another form (the older one, none, one no plan-retries
// writes).
func TestIDParts(t *testing.T) {
	const pass, ds = "0123456789abcdef", "00000000000000a1"
	for _, c := range []struct {
		name, id, pass, dataset string
	}{
		{"ID's", ID(pass, ds), pass, ds},
		{"older form", ID(pass, ""), "", ""},
		{"none", "", "", ""},
		{"upper case", "L0123456789ABCDEF-" + ds, "", ""},
		{"short pass", "L0123-" + ds, "", ""},
		{"no L", "X" + pass + "-" + ds, "", ""},
		{"dataset too long", ID(pass, ds+"0"), "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if p, d := Pass(c.id), Dataset(c.id); p != c.pass || d != c.dataset {
				t.Fatalf("lease ID %q: pass %q, dataset %q; want %q, %q", c.id, p, d, c.pass, c.dataset)
			}
		})
	}
}
