package cron

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// crontab.example's daily state export runs again on the same day (by
// hand, after a failed night) without failing on the file the first run
// wrote: the second run writes the day's export anew, with the rows the
// dataset has then.
func TestCrontabStateExportRunsTwiceADay(t *testing.T) {
	b, err := os.ReadFile("crontab.example")
	if err != nil {
		t.Fatal(err)
	}
	var export string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") && strings.Contains(line, "--table state") {
			_, cmd, _ := strings.Cut(line, `"$INFOHASH" `)
			export, _, _ = strings.Cut(cmd, " 2>>")
		}
	}
	if export == "" {
		t.Fatal("crontab.example has no state export line")
	}
	dir := filepath.Join(t.TempDir(), "ih")
	list := filepath.Join(t.TempDir(), "list.txt")
	hexList(t, list, hashes(1, 3)...)
	ih(t, "dedup", "--data", dir, list)
	if err := os.Mkdir(filepath.Join(dir, "export"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func() {
		t.Helper()
		// As cron runs it: sh -c, "\%" read as "%", /srv/ih this dataset.
		c := exec.Command("sh", "-c", `"$INFOHASH" `+strings.ReplaceAll(export, "/srv/ih", dir))
		c.Env = append(os.Environ(), "INFOHASH="+bin)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", export, err, out)
		}
	}
	run()
	hexList(t, list, hashes(4, 2)...)
	ih(t, "dedup", "--data", dir, list)
	run()
	got, err := filepath.Glob(filepath.Join(dir, "export", "state-*.csv"))
	if err != nil || len(got) != 1 {
		t.Fatalf("exports %v (%v), want one state-DAY.csv", got, err)
	}
	out, err := os.ReadFile(got[0])
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(string(out), "\n") - 1; rows != 5 {
		t.Errorf("%s: %d rows after the second run, want the 5 the dataset has then", got[0], rows)
	}
}
