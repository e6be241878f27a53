package infodict

import (
	"fmt"
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
// (torrent_inconsistent_files), under either hash; it compares none
// when "files" is an empty list (meta lists the file tree's files then,
// and does not call checkHybrid). The views are compared as libtorrent
// 2.0.x compares them (src/torrent_info.cpp,
// parse_info_section; src/file_storage.cpp, aux::files_compatible):
//
//   - the file tree's view is its files in key order, each file of any
//     bytes not ending on a piece boundary followed by one pad file to
//     it (file_storage::add_file_borrow pads so, the last file too);
//     when that view has one entry more than "files", a pad after its
//     last file of any bytes is dropped (remove_tail_padding: creators
//     before libtorrent 2.0.8 wrote no tail pad);
//   - the v1 view is "files" as listed, each with its path (v1Path) and
//     size (fileSize: a symlink has 0), at the offset the entries before
//     it sum to; a pad is a BEP 47 one (attr "p") or one named as
//     BitComet names its pads (bitCometPad), unless it is where the
//     file tree's view has a file of its path and size (BEP 52 lets a
//     file tree hold a file so named; libtorrent would take the v1 file
//     for a pad and refuse the hybrid, BEP 52 would not);
//   - both views hold as many entries and as many bytes, and entry by
//     entry, a file of any bytes that is no pad in one is one in the
//     other, with the same path, size and offset. Pad files and files
//     of no bytes (empty files, symlinks) are compared in neither name
//     nor size, only counted: one in a view stands where the other view
//     has one, whichever it is. So a gap takes one pad file, not several
//     (unless the other view has as many empty files there), and an
//     empty file's name is never compared.
//
// BEP 47's other attributes (attr "x" executable, "h" hidden, "l" a
// symlink, and its "symlink path") and mtimes are not compared either:
// files_compatible says "we deliberately ignore file attributes like
// hidden, executable and mtime", and a symlink holds no bytes. (The
// first 2.0 comparison, aux::files_equal, compared every flag, mtime and
// symlink target; only the newest copy in the index, after 2.0.x, holds
// a symlink to being one in both views, with the same target.)
func checkHybrid(raw *rawInfo, tree []treeFile) error {
	if raw.Files == nil {
		return checkHybridSingle(raw, tree)
	}
	v2, err := treeLayout(tree, *raw.PieceLength) // checkInfo: a power of two of at least 16 KiB
	if err != nil {
		return err
	}
	if len(v2) == len(raw.Files)+1 {
		v2 = dropTailPad(v2)
	}
	v1, err := filesLayout(raw.Files, v2)
	if err != nil {
		return err
	}
	for i := range min(len(v1), len(v2)) {
		a, b := &v1[i], &v2[i]
		switch {
		case a.holds() != b.holds():
			return fmt.Errorf("%w: hybrid: file %d is %s, but the file tree's piece layout has %s there "+
				"(BEP 52: the same files in the same order, one pad file aligning each to a piece)", ErrInvalid, i, a, b)
		case !a.holds():
		case !slices.Equal(a.path, b.path):
			return fmt.Errorf("%w: hybrid: file %d is %q, but the file tree has %q there (BEP 52: same names, same order)",
				ErrInvalid, i, clipPath(a.path), clipPath(b.path))
		case a.size != b.size:
			return fmt.Errorf("%w: hybrid: file %d %q has %d bytes, %d in the file tree", ErrInvalid, i, clipPath(a.path), a.size, b.size)
		case a.offset != b.offset:
			return fmt.Errorf("%w: hybrid: file %d %q starts at byte %d, but at %d in the file tree's piece layout "+
				"(BEP 52: pad files align each file to a piece)", ErrInvalid, i, clipPath(a.path), a.offset, b.offset)
		}
	}
	if n := len(v2); len(v1) > n {
		if i := slices.IndexFunc(v1[n:], entry.holds); i >= 0 {
			return fmt.Errorf("%w: hybrid: file %d %q is not in the file tree (BEP 52: both describe the same files)",
				ErrInvalid, n+i, clipPath(v1[n+i].path))
		}
		return fmt.Errorf("%w: hybrid: file %d is %s, past the file tree's piece layout's end (%d entries, pad files included)",
			ErrInvalid, n, &v1[n], n)
	} else if m := len(v1); m < n {
		if i := slices.IndexFunc(v2[m:], entry.holds); i >= 0 {
			return fmt.Errorf("%w: hybrid: file tree file %q is not in files (BEP 52: both describe the same files)",
				ErrInvalid, clipPath(v2[m+i].path))
		}
		return fmt.Errorf("%w: hybrid: files end where the file tree's piece layout has %s "+
			"(BEP 52: one pad file aligning each file to a piece)", ErrInvalid, &v2[m])
	}
	if s1, s2 := layoutSize(v1), layoutSize(v2); s1 != s2 {
		return fmt.Errorf("%w: hybrid: files hold %d bytes, pad files included, %d in the file tree's piece layout "+
			"(BEP 52: pad files end the last file at its piece's end, or there are none after it)", ErrInvalid, s1, s2)
	}
	return nil
}

// checkHybridSingle is checkHybrid for a single-file dictionary (a
// "length", no "files"): its file tree must hold that one file, named
// as the torrent: by its "name.utf-8" when present, else its "name", as
// libtorrent (src/torrent_info.cpp, extract_single_file's top level)
// names it.
func checkHybridSingle(raw *rawInfo, tree []treeFile) error {
	n, _ := singleSize(raw) // meta checked it
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
// that is a list (checkPath refused one empty or holding no string),
// else its "path" (src/torrent_info.cpp,
// extract_single_file: dict_find_list("path.utf-8"), then "path"). The
// other key is then not read: a hybrid whose "path" matches the file
// tree but whose "path.utf-8" does not is refused (libtorrent:
// torrent_inconsistent_files).
func v1Path(f *rawFile) []string {
	if u, ok := stringList(f.PathU); ok {
		return u
	}
	p, _ := stringList(f.Path)
	return p
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
