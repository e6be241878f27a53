package dataset

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// A dataset is created only in a folder that is missing, empty, already a
// dataset (it holds CURRENT), or that holds nothing but what infohash puts
// in a dataset's folder: a dataset's own entries (ownEntries: what a
// creation killed midway leaves, or a removal of an unused dataset killed
// midway, is no more than that) and its companions. Creating one in any
// other folder (--data . or --data ~) would scatter state/, inbox/,
// policy.json among the user's files.

// companionEntries are what infohash's documented setup puts in DIR
// before the first dedup makes the dataset: capture's default
// --dht-state (dht-state/), the in/ folder its --help's cron line writes
// its files to (mkdir DIR/in once), crawl-pass.sh's work/ and export/ folders,
// the flock(1) lock file of its cron line (crontab.example's .pass.lock),
// a blocklist the operator wrote first, and the lost+found of a
// filesystem made for the dataset and mounted at DIR.
var companionEntries = map[string]bool{
	"dht-state": true, "in": true, "work": true, "export": true, ".pass.lock": true, "blocklist": true, "lost+found": true,
}

// ErrNotEmpty is the cause of the bad-input error for a folder a dataset
// may not be created in: it holds no dataset and other files.
var ErrNotEmpty = errors.New("not an infohash dataset and not empty")

// creatable checks that a dataset may be created in dir, an existing
// path: nil when dir holds a dataset or only what creatable allows, a
// bad-input error naming a few of the entries that stop it otherwise. A
// dir that is not a folder is left to the caller's own error.
func creatable(dir string) error {
	if ok, err := hasCurrent(dir); err != nil || ok {
		return err
	}
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if errors.Is(err, syscall.ENOTDIR) {
		return nil
	} else if err != nil {
		return fmt.Errorf("dataset: %s: %w", dir, err)
	}
	var foreign []string
	for _, name := range names {
		if !ownEntries[name] && !companionEntries[name] && !strings.HasPrefix(name, fsutil.TempPrefix) {
			foreign = append(foreign, name)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	sort.Strings(foreign)
	const shown = 3
	holds := make([]string, 0, shown+1)
	for _, name := range foreign[:min(shown, len(foreign))] {
		holds = append(holds, fmt.Sprintf("%q", name))
	}
	if len(foreign) > shown {
		holds = append(holds, fmt.Sprintf("%d more", len(foreign)-shown))
	}
	return exitcode.BadInput(fmt.Errorf("dataset: %s: %w (it holds %s); give a new or empty folder",
		dir, ErrNotEmpty, strings.Join(holds, ", ")))
}

// Creatable checks that dir, an existing folder, holds a dataset or is one
// a dataset may be made in, as a creating open checks it (MakeDir, and
// useDir's refusal of a folder inside another dataset, NestedError): a
// bad-input error (ErrNotEmpty) for a folder of other files. policy set,
// which writes LOCK and policy.json into DIR before the first dedup may
// have made the dataset, refuses the same folders.
func Creatable(dir string) error {
	if err := refuseNested(dir); err != nil {
		return err
	}
	return creatable(dir)
}

// Makeable checks, making and opening nothing, that a creating open
// (Open with Create, Use) would take dir: nil when dir holds a dataset,
// or is missing with a parent folder to make it in, or is a folder
// Creatable allows; the bad-input error that open would return
// otherwise. A run with nothing to apply checks its --data so, to refuse
// the DIR a run with input would refuse (a typo) without making it.
func Makeable(dir string) error {
	if err := refuseNested(dir); err != nil {
		return err
	}
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return parentReady(dir)
	}
	return creatable(dir)
}
