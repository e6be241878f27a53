package app

import (
	"path/filepath"
	"strings"
)

// underAsGiven names name inside dir for an error, with dir spelt as the
// user gave it, as the error names it too: "./ih" gives "./ih/export"
// where filepath.Join cleaned it to "ih/export" beside "(in ./ih)".
func underAsGiven(dir, name string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}
