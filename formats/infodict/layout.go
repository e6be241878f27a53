package infodict

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// entry is a file of one view of a hybrid dictionary as libtorrent lays
// it out (checkHybrid): a file or a pad file, its path elements, size
// and offset (the sizes of the entries before it).
type entry struct {
	path         []string
	size, offset int64
	pad          bool
}

// holds reports whether e is compared by path, size and offset: a file
// of any bytes that is no pad (aux::files_compatible's "relevant" file,
// in libtorrent 2.0.x).
func (e entry) holds() bool { return !e.pad && e.size > 0 }

// String describes e for an error message.
func (e *entry) String() string {
	switch {
	case e.pad:
		return "a pad file of " + strconv.FormatInt(e.size, 10) + " bytes"
	case e.size == 0:
		return fmt.Sprintf("the empty file %q", clipPath(e.path))
	}
	return fmt.Sprintf("%q of %d bytes", clipPath(e.path), e.size)
}

// treeLayout is a file tree's view as libtorrent lays it out: its files
// in key order, each file of any bytes whose end is not on a piece
// boundary (of plen bytes) followed by the pad file that fills the gap
// (src/file_storage.cpp, file_storage::add_file_borrow).
func treeLayout(tree []treeFile, plen int64) ([]entry, error) {
	out := make([]entry, 0, 2*len(tree))
	var off int64
	for _, t := range tree {
		if t.length > math.MaxInt64-off-plen {
			return nil, fmt.Errorf("%w: hybrid: file tree sizes overflow", ErrInvalid)
		}
		out = append(out, entry{path: t.path, size: t.length, offset: off})
		off += t.length
		if gap := (plen - off%plen) % plen; t.length > 0 && gap > 0 {
			out = append(out, entry{size: gap, offset: off, pad: true})
			off += gap
		}
	}
	return out, nil
}

// dropTailPad is layout without the pad file after its last file of any
// bytes, if there is one there, the empty files after it moved back
// (src/file_storage.cpp, file_storage::remove_tail_padding).
func dropTailPad(layout []entry) []entry {
	for i := len(layout) - 1; i >= 0; i-- {
		if layout[i].size == 0 {
			continue
		}
		if !layout[i].pad {
			return layout
		}
		out := slices.Delete(slices.Clone(layout), i, i+1)
		for j := i; j < len(out); j++ {
			out[j].offset = layout[i].offset
		}
		return out
	}
	return layout
}

// filesLayout is a "files" list's view as libtorrent lays it out (v1
// files checkFile took): each entry with its path (v1Path), size
// (fileSize) and offset, a pad file when BEP 47 says so (attr "p") or
// when bitCometPad does, unless the file tree's view (tree) has a file
// of its path and size where it is.
func filesLayout(files []rawFile, tree []entry) ([]entry, error) {
	out := make([]entry, len(files))
	var off int64
	for i := range files {
		f := &files[i]
		e := entry{path: v1Path(f), size: fileSize(f), offset: off, pad: isPad(f.Attr)}
		if !e.pad && bitCometPad(f) {
			e.pad = i >= len(tree) || !tree[i].holds() || tree[i].size != e.size || !slices.Equal(tree[i].path, e.path)
		}
		if e.size > math.MaxInt64-off {
			return nil, fmt.Errorf("%w: hybrid: file %d: sizes overflow", ErrInvalid, i)
		}
		off += e.size
		out[i] = e
	}
	return out, nil
}

// layoutSize is the bytes a view's entries hold, pad files included.
func layoutSize(layout []entry) int64 {
	if len(layout) == 0 {
		return 0
	}
	last := layout[len(layout)-1]
	return last.offset + last.size
}
