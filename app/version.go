package app

import (
	"runtime/debug"
)

// buildVersion is the version `make build` stamps into the binary
// (-ldflags "-X github.com/infohash/infohash/app.buildVersion=...", from
// git describe --always --dirty); empty in other builds.
var buildVersion string

// version is what infohash --version prints: the version make build
// stamped, or else the module version and the commit the binary was built
// from (with "+dirty" for uncommitted changes) as the Go toolchain
// records them, which it does only with -buildvcs (GOFLAGS=-buildvcs=false
// turns that off, and a build outside a git checkout has no commit); then
// the Go version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	goVersion := "unknown"
	if ok {
		goVersion = bi.GoVersion
	}
	if buildVersion != "" {
		return buildVersion + " " + goVersion
	}
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " commit " + rev + dirty
	}
	return v + " " + bi.GoVersion
}
