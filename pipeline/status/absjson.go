package status

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

// MarshalJSON writes r with its paths absolute: dir, and the paths
// under DIR it lists (partial, rejected, pending and spooling inputs,
// foreign files, unapplied work, unpublished, staging, --verify's
// problems), as its globs already are. A consumer reading the JSON from
// another folder (a cron job's, a dashboard's) otherwise got paths
// relative to where status ran, which named nothing there. The text
// report keeps DIR as it was given, for the person who gave it.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report // without this method
	p := plain(r)
	base := r.absDir
	if base == "" { // a report not built by Run
		if a, err := filepath.Abs(r.Dir); err == nil {
			base = a
		}
	}
	abs := func(path string) string { return underAbs(r.Dir, base, path) }
	if base != "" {
		p.Dir = base
	}
	for _, list := range []*[]string{&p.Partial, &p.Rejected, &p.Pending, &p.Spooling, &p.Foreign, &p.UnappliedWork,
		&p.Unpublished, &p.Staging} {
		if *list != nil {
			*list = mapped(*list, abs)
		}
	}
	if r.Verified != nil {
		v := *r.Verified
		v.Problems = slices.Clone(v.Problems)
		for i := range v.Problems {
			v.Problems[i].Path = abs(v.Problems[i].Path)
		}
		p.Verified = &v
	}
	return json.Marshal(p)
}

// underAbs is path, a path under dir (as given), rebased on absDir, dir
// made absolute; a trailing separator (a folder listed once) is kept.
// A path absolute already, or not under dir, is made absolute on its
// own (filepath.Abs); with no absDir it is left as it is.
func underAbs(dir, absDir, path string) string {
	if filepath.IsAbs(path) || absDir == "" {
		return path
	}
	sep := string(filepath.Separator)
	out := ""
	if rel, err := filepath.Rel(dir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+sep) {
		out = filepath.Join(absDir, rel)
	} else if a, err := filepath.Abs(path); err == nil {
		out = a
	} else {
		return path
	}
	if strings.HasSuffix(path, sep) && !strings.HasSuffix(out, sep) {
		out += sep
	}
	return out
}

// mapped is f of each of list, in a new slice.
func mapped(list []string, f func(string) string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = f(s)
	}
	return out
}
