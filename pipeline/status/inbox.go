package status

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
)

// listInbox lists what is under DIR/inbox: a name ending in .bad is
// rejected (even a partial input that turned out to be bad when applied
// by hand), one with dataset.PartialPrefix is partial, a whole spool of
// stdin or a pipe (part-*.spool in DIR/inbox, part-*.results in
// inbox/merge: what dedup and merge take as leftovers, dataset.IsSpool)
// is pending, and a spool still under its temporary name is spooling.
// Any other temporary file (fsutil.TempPrefix) is a write of ours in
// progress, and not listed. Everything else is foreign: no run wrote it,
// and dedup and merge leave it alone and never read it (a file copied
// in by hand, a folder but inbox/merge, which is not walked: it is
// listed once, its path ending in a separator).
func (r *Report) listInbox() {
	inbox := filepath.Join(r.Dir, "inbox")
	merge := filepath.Join(inbox, "merge")
	_ = filepath.WalkDir(inbox, func(p string, e fs.DirEntry, err error) error {
		if err != nil { // a missing inbox/ (a read-only copy, or removed by hand) is an empty one
			return nil
		}
		name, in := e.Name(), filepath.Dir(p)
		switch {
		case e.IsDir() && (p == inbox || p == merge):
		case e.IsDir():
			r.Foreign = append(r.Foreign, p+string(filepath.Separator))
			return fs.SkipDir
		case strings.HasSuffix(name, ".bad"):
			r.Rejected = append(r.Rejected, p)
		case strings.HasPrefix(name, dataset.PartialPrefix):
			r.Partial = append(r.Partial, p)
		case strings.HasPrefix(name, fsutil.TempPrefix) && (strings.Contains(name, ".spool-") || strings.Contains(name, ".results-")):
			r.Spooling = append(r.Spooling, p)
		case strings.HasPrefix(name, fsutil.TempPrefix):
		case in == inbox && dataset.IsSpool(e, ".spool"), in == merge && dataset.IsSpool(e, ".results"):
			r.Pending = append(r.Pending, p)
		default:
			r.Foreign = append(r.Foreign, p)
		}
		return nil
	})
}

// foreignLines is how many foreign files the text lists one a line; a
// last line counts the others (--format json lists them all).
const foreignLines = 10

// printForeign lists the foreign files under DIR/inbox.
func (r *Report) printForeign(w io.Writer) {
	for i, p := range r.Foreign {
		if i == foreignLines && len(r.Foreign) > foreignLines+1 {
			fmt.Fprintf(w, "not ours, left alone: %d more files under %s (--format json lists them all)\n",
				len(r.Foreign)-i, filepath.Join(r.Dir, "inbox"))
			return
		}
		fmt.Fprintf(w, "not ours, left alone (no run wrote it, and dedup and merge never read it: they take only their own "+
			"part-*.spool from inbox/ and part-*.results from inbox/merge/; apply it by naming it, or move it out): %s\n", p)
	}
}

// stageOf is the stage whose inbox holds path: merge's is DIR/inbox/merge.
func stageOf(dir, path string) string {
	if filepath.Dir(path) == filepath.Join(dir, "inbox", "merge") {
		return "merge"
	}
	return "dedup"
}

// rejectedWhat says what the rejected input at path (under dir/inbox)
// is, from the name its maker gave it: dedup (DIR/inbox) and merge
// (DIR/inbox/merge) set aside their spools of stdin or a pipe as
// part-*.spool.bad and part-*.results.bad (dataset.SetAside), a partial
// input as partial-*.bad, and the cut message of a stream cut mid-message
// (or the cut last line of a text list) whose whole batches (lines) they
// kept as a partial input as *.cut.bad (dataset.KeepCut); Salvage a
// killed run's spool that is a Parquet file cut short as .tmp-*.bad;
// scripts/cron/crawl-pass.sh a work file that dedup or merge refused as
// crawl-pass-PASS-NAME.bad.
func rejectedWhat(dir, path string) string {
	stage := stageOf(dir, path)
	name := filepath.Base(path)
	switch {
	case strings.HasSuffix(name, dataset.CutSuffix):
		return "the cut end of a stream cut mid-message or of a list cut mid-line, whose whole batches or lines " + stage +
			" kept as a partial input; nothing in it can be applied"
	case strings.HasPrefix(name, "crawl-pass-"):
		return "a crawl-pass work file that " + stage + " refused as bad input"
	case strings.HasPrefix(name, fsutil.TempPrefix):
		return "a killed run's spool of stdin or a pipe, a Parquet file cut short"
	case strings.HasPrefix(name, dataset.PartialPrefix):
		return "a partial input that " + stage + " refused as bad input"
	case strings.HasPrefix(name, "part-") && (strings.HasSuffix(name, ".spool.bad") || strings.HasSuffix(name, ".results.bad")):
		return "stdin or a pipe that " + stage + " spooled and refused as bad input"
	}
	return "bad input"
}
