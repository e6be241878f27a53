package infodict

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// checkHybrid checks that a hybrid dictionary (meta version 2 with a
// "files" list or a "length") describes in its v1 keys the files its
// file tree holds (tree, in key order): BEP 52's upgrade path wants "files"
// or "length" to "describe the same data in the same order", with BEP 47
// pad files "to achieve identical alignment", and a client to "validate
// that the content (file names, order, piece alignment) is identical";
// libtorrent refuses a hybrid whose two views differ
// (torrent_inconsistent_files), under either hash. The views agree when:
//
//   - the v1 files other than pads are, in order, the file tree's files
//     in its key order, each with the same path elements (those of
//     "path.utf-8" when present, else of "path": v1Path) and the same
//     length; a single-file dictionary's file tree holds one file, named
//     as the torrent ("name.utf-8" when present, else "name"); a pad is
//     a BEP 47 one (attr "p") or one named as BitComet names its pads
//     (bitCometPad), unless it is the file tree's next file: libtorrent's
//     v1 parse flags such a file a pad, and its comparison of the views
//     (src/file_storage.cpp, aux::files_compatible) holds a flagged pad
//     to its place and size, never to a name: it takes a hybrid so
//     padded. A file tree may hold a file so named (BEP 52 has no such
//     rule): the v1 file of its path and length is that file, not a pad;
//   - each v1 file of any bytes starts where BEP 52 puts it, at the first
//     piece boundary at or after the previous file's end: the pad files
//     before it fill just that gap (BEP 52 aligns non-empty files only),
//     and pads after the last file stop at the piece boundary after it.
//
// BEP 47's other attributes (attr "x" executable, "h" hidden, "l" a
// symlink, and its "symlink path") and mtimes are not compared: BEP 52
// names "file names, order, piece alignment", and libtorrent takes a
// hybrid whose views differ in them. Its first comparison
// (src/file_storage.cpp, aux::files_equal) compared every flag, mtime
// and symlink target; the one that replaced it in 2.0
// (aux::files_compatible) says "we deliberately ignore file attributes
// like hidden, executable and mtime" and compares only files that are
// no pads and hold bytes, which leaves out a symlink (0 bytes). Only the
// newest copy in the index holds a symlink to being one in both views,
// with the same target; as released clients take the difference, and
// no column holds a target, it is not refused here.
func checkHybrid(raw *rawInfo, tree []treeFile) error {
	if raw.Files == nil {
		return checkHybridSingle(raw, tree)
	}
	plen := *raw.PieceLength // checkInfo: a power of two of at least 16 KiB
	var v1, v2 int64         // where the next file starts in each view
	next := 0                // the file tree's file the next v1 file must be
	for i := range raw.Files {
		f := &raw.Files[i]
		n := fileSize(f) // checkFile took it; a symlink has 0
		if isPad(f.Attr) || bitCometPad(f) && (next == len(tree) || !sameFile(f, n, &tree[next])) {
			if n > math.MaxInt64-v1 {
				return fmt.Errorf("%w: pad file %d: sizes overflow", ErrInvalid, i)
			}
			v1 += n
			continue
		}
		if next == len(tree) {
			return fmt.Errorf("%w: hybrid: file %d %q is not in the file tree (BEP 52: both describe the same files)",
				ErrInvalid, i, clipPath(v1Path(f)))
		}
		t := &tree[next]
		next++
		if !samePath(f, t.path) {
			return fmt.Errorf("%w: hybrid: file %d is %q, but the file tree's file %d is %q (BEP 52: same names, same order)",
				ErrInvalid, i, clipPath(v1Path(f)), next-1, clipPath(t.path))
		}
		if n != t.length {
			return fmt.Errorf("%w: hybrid: file %d %q has %d bytes, %d in the file tree", ErrInvalid, i, clipPath(v1Path(f)), n, t.length)
		}
		if n > 0 {
			if v2 > math.MaxInt64-plen {
				return fmt.Errorf("%w: hybrid: file %d: sizes overflow", ErrInvalid, i)
			}
			v2 = (v2 + plen - 1) / plen * plen
			if v1 != v2 {
				return fmt.Errorf("%w: hybrid: file %d %q starts at byte %d, but at %d in the file tree's piece layout "+
					"(BEP 52: pad files align each file to a piece)", ErrInvalid, i, clipPath(v1Path(f)), v1, v2)
			}
		}
		if n > math.MaxInt64-v1 {
			return fmt.Errorf("%w: hybrid: file %d: sizes overflow", ErrInvalid, i)
		}
		v1, v2 = v1+n, v2+n // v1 == v2 when n > 0

	}
	if next < len(tree) {
		return fmt.Errorf("%w: hybrid: file tree file %q is not in files (BEP 52: both describe the same files)",
			ErrInvalid, clipPath(tree[next].path))
	}
	if gap := (plen - v2%plen) % plen; v1-v2 > gap { // pads only add to v1
		return fmt.Errorf("%w: hybrid: pad files run %d bytes past the last file's end, more than the %d to its piece's end",
			ErrInvalid, v1-v2, gap)
	}
	return nil
}

// checkHybridSingle is checkHybrid for a single-file dictionary (a
// "length", no "files"): its file tree must hold that one file, named
// as the torrent: by its "name.utf-8" when present, else its "name", as
// libtorrent (src/torrent_info.cpp, extract_single_file's top level)
// names it.
func checkHybridSingle(raw *rawInfo, tree []treeFile) error {
	n, _ := Int(raw.Length) // meta checked it
	if len(tree) != 1 {
		return fmt.Errorf("%w: hybrid: a single file of %d bytes, but the file tree holds %d files (BEP 52: the same files)",
			ErrInvalid, n, len(tree))
	}
	t := tree[0]
	name := raw.NameUTF8 // libtorrent names the single file by "name.utf-8" when present, else "name"
	if name == nil {
		name = raw.Name
	}
	if len(t.path) != 1 || *name != t.path[0] {
		return fmt.Errorf("%w: hybrid: the single file is %q in the file tree, not named as the torrent", ErrInvalid, clipPath(t.path))
	}
	if t.length != n {
		return fmt.Errorf("%w: hybrid: the single file has %d bytes, %d in the file tree", ErrInvalid, n, t.length)
	}
	return nil
}

// samePath reports whether a v1 file's path (v1Path) is the list of
// path elements p.
func samePath(f *rawFile, p []string) bool { return slices.Equal(v1Path(f), p) }

// v1Path is the path libtorrent gives a v1 file: its "path.utf-8" when
// that is a list of strings, else its "path" (src/torrent_info.cpp,
// extract_single_file: dict_find_list("path.utf-8"), then "path"). The
// other key is then not read: a hybrid whose "path" matches the file
// tree but whose "path.utf-8" does not is refused (libtorrent:
// torrent_inconsistent_files).
func v1Path(f *rawFile) []string {
	if u, ok := pathUTF8(f); ok {
		return u
	}
	return f.Path
}

// sameFile reports whether a v1 file of n bytes is the file tree's file
// t: the same path and length.
func sameFile(f *rawFile, n int64, t *treeFile) bool { return n == t.length && samePath(f, t.path) }

// pathUTF8 is a v1 file's "path.utf-8" when it is a list of strings.
func pathUTF8(f *rawFile) ([]string, bool) {
	if f.PathU == nil {
		return nil, false
	}
	v, err := decodeValue(f.PathU)
	l, ok := v.([]any)
	if err != nil || !ok {
		return nil, false
	}
	p := make([]string, len(l))
	for i, e := range l {
		if p[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return p, true
}

// bitCometMark is what the name of a BitComet pad file holds
// ("_____padding_file_0_if you see this file, please update to BitComet
// 0.85 or above____"): BitComet pads the v1 files list with zeros so
// named, without BEP 47's attr "p".
const bitCometMark = "_____padding_file_"

// bitCometPad reports whether libtorrent takes a v1 file for a pad file
// by its name: src/torrent_info.cpp, extract_single_file, sets
// flag_pad_file when the name holds bitCometMark (the newest copy reads
// the last path element; older ones, 0.16 to 2.0, the whole path, the
// torrent's name included). Here the last element of the file's path
// (v1Path: "path.utf-8" when a list of strings, else "path") holds it,
// anywhere, as libtorrent searches it. Only the hybrid comparison reads
// it: Parse lists such files as any (it leaves out BEP 47 pads only), as
// it always has.
func bitCometPad(f *rawFile) bool {
	p := v1Path(f)
	return len(p) > 0 && strings.Contains(p[len(p)-1], bitCometMark)
}
