package app

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the binary infohashBinary built, once every test has
// run: each test process built one into its own temporary folder and
// left it there.
func TestMain(m *testing.M) {
	code := m.Run()
	if captureBin != "" {
		os.RemoveAll(filepath.Dir(captureBin))
	}
	os.Exit(code)
}
