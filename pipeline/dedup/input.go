package dedup

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zeebo/xxh3"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/internal/exitcode"
)

// inputKind is what an input file holds, detected from its content.
type inputKind int

const (
	kindParquet inputKind = iota
	kindArrow
	kindText
)

func (k inputKind) String() string { return [...]string{"parquet", "arrow", "text"}[k] }

// format names the kind in errors about corrupt input.
func (k inputKind) format() string {
	return [...]string{"Parquet", "Arrow IPC stream", "hash list"}[k]
}

// input is one file to apply.
type input struct {
	name  string // as the user named it (stdin inputs: "stdin (inbox/…)")
	path  string
	id    string // content checksum
	size  int64
	kind  inputKind
	inbox bool // spooled: removed once applied
}

// resolveInputs expands folders, spools stdin into the inbox and picks up
// inbox files a killed run left behind.
func resolveInputs(args []string, stdin io.Reader, d *dataset.Dataset) ([]input, error) {
	var out []input
	inbox := d.Path("inbox")
	for _, a := range args {
		if a == "-" {
			p, err := dataset.Spool(inbox, ".spool", stdin)
			if err != nil {
				return nil, fmt.Errorf("dedup: stdin: %w", err)
			}
			in, err := probe(p, "stdin ("+filepath.Join("inbox", filepath.Base(p))+")")
			if err != nil {
				return nil, setAside(input{path: p, inbox: true}, err)
			}
			in.inbox = true
			out = append(out, in)
			continue
		}
		st, err := os.Stat(a)
		if err != nil {
			return nil, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
		}
		if !st.IsDir() {
			in, err := probe(a, a)
			if err != nil {
				return nil, err
			}
			out = append(out, in)
			continue
		}
		var files []string
		err = filepath.WalkDir(a, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.HasPrefix(e.Name(), fsutil.TempPrefix) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, exitcode.BadInput(fmt.Errorf("dedup: %s: %w", a, err))
		}
		if len(files) == 0 {
			return nil, exitcode.BadInput(fmt.Errorf("dedup: %s: folder holds no .parquet files", a))
		}
		sort.Strings(files)
		for _, p := range files {
			in, err := probe(p, p)
			if err != nil {
				return nil, err
			}
			out = append(out, in)
		}
	}
	// Spooled input of earlier runs that died before applying it. What a
	// run killed while spooling had read is set aside (dataset.Salvage).
	if _, err := dataset.Salvage(inbox, ".spool"); err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	ents, _ := os.ReadDir(inbox)
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), fsutil.TempPrefix) || strings.HasSuffix(e.Name(), badSuffix) ||
			strings.HasPrefix(e.Name(), dataset.PartialPrefix) {
			continue
		}
		p := filepath.Join(inbox, e.Name())
		if containsPath(out, p) {
			continue
		}
		in, err := probe(p, "leftover "+filepath.Join("inbox", e.Name()))
		if err != nil {
			// A leftover that cannot be read must not block new input forever.
			os.Rename(p, p+badSuffix)
			continue
		}
		in.inbox = true
		out = append(out, in)
	}
	return out, nil
}

// badSuffix marks spooled input that was bad: later runs leave it alone
// (the user may inspect or delete it).
const badSuffix = ".bad"

// setAside renames spooled stdin input that failed as bad input, so that
// it does not fail every later run as a leftover, and says so in err.
func setAside(in input, err error) error {
	if !in.inbox || exitcode.Of(err) != exitcode.Usage {
		return err
	}
	if os.Rename(in.path, in.path+badSuffix) != nil {
		return err
	}
	return fmt.Errorf("%w (set aside as %s)", err, filepath.Join("inbox", filepath.Base(in.path)+badSuffix))
}

func containsPath(ins []input, p string) bool {
	for _, in := range ins {
		if in.path == p {
			return true
		}
	}
	return false
}

var (
	parquetMagic = []byte("PAR1")
	arrowMagic   = []byte{0xff, 0xff, 0xff, 0xff}
)

// probe detects an input's kind from its first bytes and checksums it.
func probe(path, name string) (input, error) {
	f, err := os.Open(path)
	if err != nil {
		return input{}, exitcode.BadInput(fmt.Errorf("dedup: %w", err))
	}
	defer f.Close()
	h := xxh3.New()
	var head [8]byte
	n, _ := io.ReadFull(f, head[:])
	if n == 0 {
		return input{}, exitcode.BadInput(fmt.Errorf("dedup: %s: empty input", name))
	}
	h.Write(head[:n])
	size, err := io.Copy(h, f)
	if err != nil {
		return input{}, fmt.Errorf("dedup: %s: %w", name, err)
	}
	sum := h.Sum128().Bytes()
	in := input{name: name, path: path, id: hex.EncodeToString(sum[:]), size: size + int64(n)}
	switch {
	case bytes.HasPrefix(head[:n], parquetMagic):
		in.kind = kindParquet
	case bytes.HasPrefix(head[:n], arrowMagic):
		in.kind = kindArrow
	case bytes.IndexByte(head[:n], 0) >= 0:
		return input{}, exitcode.BadInput(fmt.Errorf("dedup: %s: neither Parquet, an Arrow IPC stream nor a text hash list", name))
	default:
		in.kind = kindText
	}
	return in, nil
}
