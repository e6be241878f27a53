package dataset

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/infohash/infohash/formats/fsutil"
)

// LiveSpools says, for the error of a run given no input that found
// nothing to apply in an inbox folder (dedup's DIR/inbox/, ext ".spool";
// merge's DIR/inbox/merge/, ext ".results"), which spools there live
// runs hold, naming them under shown (the folder as the run names it):
// one still under its temporary name is being read from a run's stdin
// or pipe, a whole one is about to be applied by the run that spooled
// it. Either run applies its input itself: there is nothing to do but
// wait. It is called once the run has claimed the leftovers and Salvage
// has set aside what killed runs spooled, so that what is left is live.
// "" when there is none; else the text begins with "; ". Without it, the
// error said only that there was nothing left to apply, as if that
// input were lost.
func LiveSpools(dir, shown, ext string) string {
	ents, _ := os.ReadDir(dir)
	var reading, applying []string
	for _, e := range ents {
		name := e.Name()
		switch {
		case !e.Type().IsRegular() || strings.HasSuffix(name, ".bad"):
		case strings.HasPrefix(name, fsutil.TempPrefix) && strings.Contains(name, ext+"-"):
			reading = append(reading, filepath.Join(shown, name))
		case IsSpool(e, ext):
			applying = append(applying, filepath.Join(shown, name))
		}
	}
	var notes []string
	if len(reading) > 0 {
		notes = append(notes, "another run is still spooling its stdin or pipe into "+strings.Join(reading, ", ")+
			" (status: spooling), which it applies itself once that input ends")
	}
	if len(applying) > 0 {
		notes = append(notes, "another run is applying what it spooled into "+strings.Join(applying, ", "))
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ") + ": nothing to do here but wait for that run"
}
