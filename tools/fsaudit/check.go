package fsaudit

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
)

// dataset is a dataset folder the audit checks.
type dataset struct {
	path      string
	committed int // line of the last rename onto its CURRENT (0: none)
	// What the durable CURRENT needs, from the last check: its manifest's
	// name, the files (manifest, data, Bloom) and the entries that lead
	// to them.
	manifest    string
	needFiles   map[*node]needed
	needEntries map[entryKey]string
}

// needed is a file a commit needs: its path, and what it is to the commit.
type needed struct {
	path, what string
}

// notDurable is the cause of a needed file's data not being durable.
func (nd needed) notDurable(n *node) string {
	return nd.what + " has data that is not durable: " + unsynced(n)
}

// problem is a file of a commit that a power cut would lose or damage.
type problem struct {
	path, cause string
}

func (a *auditor) dataset(p string) *dataset {
	for _, ds := range a.datasets {
		if ds.path == p {
			return ds
		}
	}
	ds := &dataset{path: p}
	a.datasets = append(a.datasets, ds)
	return ds
}

// flag reports a violation at ev, once per file and cause.
func (a *auditor) flag(ev *Event, p, prefix, cause string) {
	key := p + "\x00" + cause
	if a.seen[key] {
		return
	}
	a.seen[key] = true
	a.rep.Violations = append(a.rep.Violations, Violation{Line: ev.Line, Call: ev.Name, Path: p, What: prefix + cause})
}

// recheck checks, after a sync, what a power cut would leave of each
// dataset: the durable CURRENT must name a whole, durable commit. It
// notes what that commit needs, for the writes and removals that follow.
func (a *auditor) recheck(ev *Event) {
	for _, ds := range a.datasets {
		ds.manifest, ds.needFiles, ds.needEntries = "", nil, nil
		cur, _, _ := a.fs.durable(ds.path + "/CURRENT")
		if cur == nil {
			continue
		}
		probs := a.commit(ds, cur)
		for _, p := range probs {
			a.flag(ev, p.path, "a power cut now leaves a CURRENT that is not whole: ", p.cause)
		}
	}
}

// commit checks the commit that CURRENT node cur of ds names, as a power
// cut would leave it, and records what it needs in ds.
func (a *auditor) commit(ds *dataset, cur *node) []problem {
	ds.needFiles, ds.needEntries = map[*node]needed{}, map[entryKey]string{}
	cp := ds.path + "/CURRENT"
	nc := needed{cp, "CURRENT"}
	ds.needFiles[cur] = nc
	if cur.wrote != 0 {
		return []problem{{cp, nc.notDurable(cur)}}
	}
	b, ok := cur.durableContent()
	if !ok {
		if cur.before == "" && cur.synced == 0 {
			return nil // from before the trace, unknown: taken as whole
		}
		return []problem{{cp, "CURRENT's content is not in the trace (strace -s cut it)"}}
	}
	name := strings.TrimSpace(string(b))
	if !isManifestName(name) {
		return []problem{{cp, fmt.Sprintf("CURRENT durably holds %q, no manifest name", excerpt(name))}}
	}
	ds.manifest = name
	mp := ds.path + "/manifests/" + name
	m, probs := a.need(ds, mp, "the manifest CURRENT names")
	if m == nil || len(probs) > 0 {
		return probs
	}
	mb, ok := m.durableContent()
	if !ok {
		if m.before == "" && m.synced == 0 {
			return nil
		}
		return []problem{{mp, "its content is not in the trace (strace -s cut it)"}}
	}
	files, err := manifestFiles(mb)
	if err != nil {
		return []problem{{mp, "its durable content is no whole manifest: " + err.Error()}}
	}
	for _, rel := range files {
		if _, more := a.need(ds, ds.path+"/"+rel, "a file manifest "+name+" lists"); len(more) > 0 {
			probs = append(probs, more...)
		}
	}
	return probs
}

// need checks that the file at p, which what a commit of ds needs is, is
// durably there with durable data, and records it and its entries.
func (a *auditor) need(ds *dataset, p, what string) (*node, []problem) {
	n, chain, why := a.fs.durable(p)
	if n == nil {
		return nil, []problem{{p, what + " is not durably there: " + why}}
	}
	skip := strings.Count(strings.Trim(ds.path, "/"), "/") + 1
	for i, e := range chain {
		if i >= skip {
			ds.needEntries[e] = p
		}
	}
	nd := needed{p, what}
	ds.needFiles[n] = nd
	if n.wrote != 0 {
		return n, []problem{{p, nd.notDurable(n)}}
	}
	return n, nil
}

// unsynced says since when n's data is not durable.
func unsynced(n *node) string {
	if n.synced > 0 {
		return fmt.Sprintf("written at line %d (%s) after its last sync, at line %d", n.wrote, n.wroteBy, n.synced)
	}
	return fmt.Sprintf("written at line %d (%s), never synced (no fsync of it nor syncfs since)", n.wrote, n.wroteBy)
}

// removing flags a removal of dir's entry name (at path p) that the
// durable CURRENT of a dataset still needs.
func (a *auditor) removing(ev *Event, dir *node, name, p string) {
	for _, ds := range a.datasets {
		if q, ok := ds.needEntries[entryKey{dir, name}]; ok {
			a.flag(ev, p, "", fmt.Sprintf("removes what the durable CURRENT's snapshot (manifest %s) needs (%s): a power cut after this removal reaches the disk loses it", ds.manifest, q))
		}
	}
}

// publishing checks a rename or link of src onto to that publishes: onto
// a dataset's CURRENT (the commit point), or onto an output. A rename may
// reach the disk before any sync of its folder, so what it publishes
// must be durable before it.
func (a *auditor) publishing(ev *Event, src *node, to string) {
	a.cachePublished(ev, src, to)
	a.spoolNamed(ev, src, to)
	if _, ok := a.outputs[to]; ok {
		a.outputs[to] = ev.Line
		if src.wrote != 0 {
			a.flag(ev, to, "", "renames the output into place before its data is durable: "+unsynced(src))
		}
	}
	if path.Base(to) != "CURRENT" {
		return
	}
	ds := a.dataset(path.Dir(to))
	ds.committed = ev.Line
	a.rep.Commits++
	if d, _, _ := a.fs.durable(ds.path); d == nil {
		return // a new dataset's folder: not there after a power cut yet
	}
	saved := *ds
	for _, p := range a.commit(ds, src) {
		a.flag(ev, p.path, "publishes a commit before it is durable (a power cut once this rename reaches the disk): ", p.cause)
	}
	ds.manifest, ds.needFiles, ds.needEntries = saved.manifest, saved.needFiles, saved.needEntries
}

// exit checks, as the step exits with status, that what it committed
// (and its outputs) is durable: exits 0, 3 (partial) and 130 (stopped by
// a signal) say so.
func (a *auditor) exit(ev *Event, status int) {
	if a.exited {
		return
	}
	a.exited = true
	a.rep.Exit = status
	a.recheck(ev)
	a.keptAtExit(ev, status)
	if status != 0 && status != 3 && status != 130 {
		return
	}
	check := func(p string, line int, what string) {
		now := a.fs.lookup(p, false)
		n, _, why := a.fs.durable(p)
		switch {
		case n == nil:
		case n != now:
			dir, base := a.fs.parentOf(p)
			why = missing(dir, base, path.Dir(p))
		case n.wrote != 0:
			why = "its data is not durable: " + unsynced(n)
		default:
			return
		}
		a.flag(ev, p, "", fmt.Sprintf("exits %d before its %s (line %d) is durable: %s", status, what, line, why))
	}
	for _, ds := range a.datasets {
		if ds.committed > 0 {
			check(ds.path+"/CURRENT", ds.committed, "commit's rename of CURRENT")
		}
	}
	outs := make([]string, 0, len(a.outputs))
	for o := range a.outputs {
		outs = append(outs, o)
	}
	sort.Strings(outs)
	for _, o := range outs {
		if line := a.outputs[o]; line > 0 {
			check(o, line, "output's rename")
		} else if n := a.fs.lookup(o, true); n != nil && n.wrote != 0 {
			// written in place, never renamed: "-o - > FILE"
			a.flag(ev, o, "", fmt.Sprintf("exits %d before its output, written in place, is durable: %s", status, unsynced(n)))
		}
	}
}

// isManifestName: digits and ".json", as the dataset names manifests.
func isManifestName(s string) bool {
	num, ok := strings.CutSuffix(s, ".json")
	if !ok || num == "" || len(num) > 19 {
		return false
	}
	return strings.Trim(num, "0123456789") == ""
}

func excerpt(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// manifestFiles lists the files a manifest names, relative to its
// dataset: each table's data files and Bloom filters.
func manifestFiles(b []byte) ([]string, error) {
	type file struct {
		Name string `json:"name"`
	}
	var m struct {
		Tables map[string]*struct {
			Dir        string            `json:"dir"`
			Partitions map[string][]file `json:"partitions"`
			Blooms     map[string]file   `json:"blooms"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m.Tables == nil {
		return nil, errors.New("no tables")
	}
	var out []string
	add := func(dir, name string) error {
		p := path.Join(dir, name)
		if name == "" || strings.Contains(name, "/") || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("file %q of %q is outside the dataset", name, dir)
		}
		out = append(out, p)
		return nil
	}
	for tname, t := range m.Tables {
		if t == nil {
			return nil, fmt.Errorf("table %s is null", tname)
		}
		for key, files := range t.Partitions {
			dir := t.Dir
			if key != "" {
				dir = path.Join(t.Dir, "prefix="+key)
			}
			for _, f := range files {
				if err := add(dir, f.Name); err != nil {
					return nil, err
				}
			}
		}
		for _, f := range t.Blooms {
			if err := add(path.Join(t.Dir, "_bloom"), f.Name); err != nil {
				return nil, err
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
