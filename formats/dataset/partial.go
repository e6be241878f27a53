package dataset

import (
	"os"
	"path/filepath"
	"strings"
)

// IsPartial reports whether path names a file that Salvage set aside in
// the inbox folder dir (a PartialPrefix name directly in dir, however
// path spells dir: relative, through a symbolic link). The stage that
// applies such a file owns it as it owns its spools: it removes the file
// once the commit that records it in the ledger is durable (or finds it
// there already), and sets it aside as bad input if it is.
func IsPartial(dir, path string) bool {
	if !strings.HasPrefix(filepath.Base(path), PartialPrefix) {
		return false
	}
	in, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return false
	}
	inbox, err := os.Stat(dir)
	return err == nil && os.SameFile(in, inbox)
}
