package capture

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/infohash/infohash/formats/schema"
)

// libtorrentPython is Debian's interpreter, for which python3-libtorrent
// is packaged (a pyenv python3 on PATH would not see it).
const libtorrentPython = "/usr/bin/python3"

// TestInteropWithLibtorrent crawls DHT nodes of a second implementation:
// libtorrent 2.0 (Debian's python3-libtorrent), which answers BEP 51.
func TestInteropWithLibtorrent(t *testing.T) {
	if err := exec.Command(libtorrentPython, "-c", "import libtorrent").Run(); err != nil {
		t.Skipf("python3-libtorrent is not installed for %s (%v); install it with: "+
			"apt-get update && apt-get install -y python3-libtorrent", libtorrentPython, err)
	}
	cmd := exec.Command(libtorrentPython, "../../tools/libtorrentnode/node.py",
		"--nodes", "6", "--hashes", "20", "--duration", "90", "--save-path", t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // node.py exits when stdin closes
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	var ready struct {
		Nodes  []string `json:"nodes"`
		Hashes []string `json:"hashes"`
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		if !ok {
			t.Fatalf("node.py ended without a ready line; stderr:\n%s", stderr.String())
		}
		if err := json.Unmarshal([]byte(l), &ready); err != nil {
			t.Fatalf("ready line %q: %v", l, err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("node.py not ready within 60s; stderr:\n%s", stderr.String())
	}

	o := testOptions()
	o.Bootstrap = ready.Nodes
	isLT, announced := map[string]bool{}, map[string]bool{}
	for _, n := range ready.Nodes {
		isLT[n] = true
	}
	for _, h := range ready.Hashes {
		announced[h] = true
	}
	// count reads the rows: the announced hashes sampled from
	// libtorrent's BEP 51, and those heard in all.
	count := func(rows []schema.Observation) (sampled, heard map[string]bool) {
		sampled, heard = map[string]bool{}, map[string]bool{}
		for _, r := range rows {
			h := fmt.Sprintf("%x", r.InfoHash)
			switch {
			case r.Source == schema.SourceAnnouncePeer && announced[h]:
				heard[h] = true // libtorrent announced to us directly
			case r.Source == schema.SourceSampleInfohashes && isLT[r.NodeAddr] && announced[h]:
				sampled[h] = true
				heard[h] = true
			}
		}
		return sampled, heard
	}
	enough := func(sampled, heard map[string]bool) bool {
		return len(sampled) > 0 && len(heard)*10 >= len(announced)*9
	}
	// The run goes on until it has heard enough (hangGuard bounds it), not
	// for 4 s: a loaded machine may crawl slower, not worse.
	sink := &memSink{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, wait := runAsync(t, ctx, o, sink)
	waitFor(t, "90% of the announced hashes, some sampled", func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return enough(count(sink.rows))
	})
	cancel()
	st, err := wait()
	if err != nil && st.StopReason != StopInterrupted {
		t.Fatal(err)
	}
	for _, r := range sink.rows {
		h := fmt.Sprintf("%x", r.InfoHash)
		if r.Source != schema.SourceSampleInfohashes {
			continue
		}
		if !isLT[r.NodeAddr] {
			t.Errorf("sample from %s, which is not a libtorrent node", r.NodeAddr)
		}
		if !announced[h] {
			t.Errorf("libtorrent node %s sampled %s, which was never announced", r.NodeAddr, h)
		}
	}
	sampled, heard := count(sink.rows)
	t.Logf("%d of %d announced hashes sampled through libtorrent's BEP 51, %d heard in all; stats %+v",
		len(sampled), len(announced), len(heard), st)
	if st.SampleResponses == 0 {
		t.Fatalf("no sample response; stats %+v", st)
	}
}
