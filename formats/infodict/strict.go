package infodict

import (
	"fmt"
	"strings"
)

// The checks below refuse what BEP 3 or BEP 52 make an invalid info
// dictionary and libtorrent's torrent_info refuses too: a client would
// not take the torrent, and as the bytes match the infohash, no peer
// can serve better ones (fetch's invalid_metadata is final).
//
// Kept accepted, though libtorrent refuses some of them, as the columns
// still tell the truth about the bytes and a refusal would lose torrents
// other clients take:
//
//   - no "piece length" (piece_length is null) outside a v2 dictionary,
//     and 0 in a torrent of no bytes (anacrolix takes both);
//   - a v1 "piece length" that is no power of two (BEP 3 only says
//     "almost always"), and "pieces" absent or of another count than
//     the files need (fetch verifies no piece; the tools' test torrents
//     have random sizes);
//   - an empty name, no files, or files of 0 bytes in all (a torrent of
//     nothing is what its columns say); libtorrent refuses an empty
//     "name" of a single file (torrent_missing_name; "name.utf-8" absent
//     or no string), kept here as anacrolix takes it (its validateInfo
//     reads no name) and libtorrent takes an empty name of any other
//     dictionary (parse_info_section names the torrent by its infohash),
//     but an empty "name.utf-8" of one is refused (checkInfo);
//   - path elements that are empty, "." or "..", or hold "/": libtorrent
//     and BEP 52 sanitize them rather than refuse the torrent, and
//     path_raw keeps them as sent (no path here is ever a local path);
//   - a pieces root of 32 zero bytes (no better than any 32 bytes
//     without the piece layers, which the info dictionary does not hold).

// checkMetaVersion checks "meta version" (raw bencode; nil when absent)
// before anything else, as BEP 52 wants ("implementations must check
// this field first and indicate that a torrent is of a newer version
// than they can handle"): it must be an integer (BEP 52) of at most 2.
// A later version marks "an incompatible change" (BEP 52): its files,
// sizes or hashes may mean what no BEP we know says, so no hash type
// takes it, a v1 hash (its SHA-1) no more than a v2 one; libtorrent
// refuses it too (torrent_unknown_version), whichever hash. Neither can
// a value that is no integer tell which version it means (libtorrent
// reads it as absent). 2 or less is no newer version: ParseAs refuses
// it under a v2 hash unless it is 2 (ErrVersion), a v1 hash takes it.
func checkMetaVersion(b []byte) error {
	if b == nil {
		return nil
	}
	v, err := Int(b)
	switch {
	case err != nil:
		return fmt.Errorf("%w: meta version %q is not an integer (BEP 52)", ErrInvalid, Clip(b))
	case v > 2:
		return fmt.Errorf("%w: meta version %d, newer than BEP 52's 2: an incompatible format we cannot read", ErrInvalid, v)
	}
	return nil
}

// checkInfo checks the keys of the dictionary itself: a name (BEP 3),
// "name" or "name.utf-8" a string (names: libtorrent reads either, and
// takes a "name.utf-8" alone), "pieces" a string of 20-byte
// hashes (BEP 3), and in a dictionary of meta version 2 (v2 or hybrid) a
// piece length that is a power of two of at least 16 KiB (BEP 52); then
// that meta version 2 and a "file tree" dictionary come together
// (checkFileTree). A single file (a "length", no "files") must not be
// named by an empty "name.utf-8": libtorrent (src/torrent_info.cpp,
// extract_single_file, top_level) names it by "name.utf-8" when that is
// a string, without reading "name", and refuses an empty one
// (torrent_missing_name).
func checkInfo(raw *rawInfo) error {
	if raw.Name == nil && raw.NameUTF8 == nil {
		return fmt.Errorf("%w: no name (neither name nor name.utf-8 a string)", ErrInvalid)
	}
	if raw.Files == nil && raw.Length != nil && raw.NameUTF8 != nil && *raw.NameUTF8 == "" {
		return fmt.Errorf("%w: a single file named by an empty name.utf-8 (libtorrent reads it before name)", ErrInvalid)
	}
	if raw.Pieces != nil {
		v, err := decodeValue(raw.Pieces)
		s, ok := v.(string)
		switch {
		case err != nil || !ok:
			return fmt.Errorf("%w: pieces %q is not a string", ErrInvalid, Clip(raw.Pieces))
		case len(s)%20 != 0:
			return fmt.Errorf("%w: pieces has %d bytes, not a multiple of 20 (BEP 3: SHA-1 hashes)", ErrInvalid, len(s))
		}
	}
	if string(raw.MetaVersion) == "i2e" {
		switch pl := raw.PieceLength; {
		case pl == nil:
			return fmt.Errorf("%w: meta version 2 without a piece length (BEP 52)", ErrInvalid)
		case *pl < minPieceV2 || *pl&(*pl-1) != 0:
			return fmt.Errorf("%w: piece length %d in a v2 dictionary, not a power of two of at least 16 KiB (BEP 52)", ErrInvalid, *pl)
		}
	}
	return checkFileTree(raw)
}

// checkFileTree checks that a dictionary of meta version 2 has a "file
// tree" dictionary and that one without it (absent, or 0 or 1: checked
// before) has none. BEP 52 makes the file tree a key of the v2 format
// that meta version 2 announces: the one without the other is neither a
// v2 nor a hybrid dictionary, though a reader taking it as v1 would not
// notice. libtorrent's torrent_info::parse_info_section refuses both,
// whichever hash: torrent_missing_file_tree for meta version 2 without
// a "file tree" dictionary (one of another type is as absent), and
// torrent_missing_meta_version for a "file tree" dictionary under any
// other meta version. A "file tree" that is no dictionary, without meta
// version 2, it ignores, as Parse does beside a length or files.
func checkFileTree(raw *rawInfo) error {
	tree := len(raw.FileTree) > 0 && raw.FileTree[0] == 'd'
	switch v2 := string(raw.MetaVersion) == "i2e"; {
	case v2 && raw.FileTree == nil:
		return fmt.Errorf("%w: meta version 2 without a file tree (BEP 52)", ErrInvalid)
	case v2 && !tree:
		return fmt.Errorf("%w: meta version 2 with a file tree %q that is not a dictionary (BEP 52)", ErrInvalid, Clip(raw.FileTree))
	case !v2 && tree:
		return fmt.Errorf("%w: a file tree without meta version 2 (BEP 52: only a v2 or hybrid dictionary has one)", ErrInvalid)
	}
	return nil
}

// minPieceV2 is BEP 52's least piece length, the 16 KiB of a merkle
// tree's leaf block.
const minPieceV2 = 16 << 10

// checkFile checks entry i of a "files" list and returns its size
// (fileSize): a file must have a length (BEP 3), an integer of at least
// 0, and a path (checkPath). A BEP 47 symlink, attr "l", needs no
// length: libtorrent (src/torrent_info.cpp, extract_single_file) takes
// its size as 0 without reading "length", whatever it holds.
func checkFile(i int, f *rawFile) (int64, error) {
	if !hasAttr(f.Attr, "l") {
		n, err := Int(f.Length)
		switch {
		case f.Length == nil:
			return 0, fmt.Errorf("%w: file %d has no length", ErrInvalid, i)
		case err != nil:
			return 0, fmt.Errorf("%w: file %d has a length %q that is not an integer", ErrInvalid, i, Clip(f.Length))
		case n < 0:
			return 0, fmt.Errorf("%w: file %d has a negative length", ErrInvalid, i)
		}
	}
	if err := checkPath(i, f); err != nil {
		return 0, err
	}
	return fileSize(f), nil
}

// checkPath checks entry i's path as libtorrent (src/torrent_info.cpp,
// extract_single_file, not at the top level) reads it: its "path.utf-8"
// when that is a list, else its "path" when that is a list, the other
// key then never read (either may be absent, empty, or of any type).
// That list must hold strings only (path_length: torrent_invalid_name)
// and at least one (BEP 3: "a zero length list is an error case";
// torrent_missing_name), unless the file is a BEP 47 pad file, whose
// path libtorrent makes up (".pad/N"); no list at all is as an empty one.
func checkPath(i int, f *rawFile) error {
	key, l := "path.utf-8", listOf(f.PathU)
	if l == nil {
		key, l = "path", listOf(f.Path)
	}
	for _, e := range l {
		if _, ok := e.(string); !ok {
			return fmt.Errorf("%w: file %d has a %s holding an element that is not a string", ErrInvalid, i, key)
		}
	}
	switch {
	case len(l) > 0 || isPad(f.Attr):
		return nil
	case key == "path.utf-8":
		return fmt.Errorf("%w: file %d has an empty path.utf-8 (libtorrent reads it instead of path)", ErrInvalid, i)
	}
	return fmt.Errorf("%w: file %d has no path (BEP 3: an empty path list is an error)", ErrInvalid, i)
}

// listOf is the bencoded value b (nil when absent) when it is a list
// (non-nil, empty or not), else nil.
func listOf(b []byte) []any {
	if b == nil {
		return nil
	}
	v, err := decodeValue(b)
	if l, ok := v.([]any); err == nil && ok {
		return l
	}
	return nil
}

// stringList is the bencoded value b (nil when absent) when it is a list
// of strings, and whether it is one.
func stringList(b []byte) ([]string, bool) {
	l := listOf(b)
	if l == nil {
		return nil, false
	}
	p := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		p[i] = s
	}
	return p, true
}

// storedPath is the path elements the columns store for a "files" entry
// checkFile took: its "path" when that is a list of strings holding one
// at least, whatever its "path.utf-8" (as always: name and name_raw keep
// "name" alike); a pad file's "path" when that is an empty list or
// absent (no elements, as always); else its "path.utf-8", a list of
// strings (checkPath: for a file that is no pad, one at least), the path
// libtorrent reads, as "path" is then absent, empty or no list of
// strings (which only a valid "path.utf-8" makes acceptable).
func storedPath(f *rawFile) []string {
	p, ok := stringList(f.Path)
	if ok && len(p) > 0 || isPad(f.Attr) && (ok || f.Path == nil) {
		return p
	}
	u, _ := stringList(f.PathU)
	return u
}

// fileSize is the size of a "files" entry checkFile took: 0 for a BEP 47
// symlink (attr "l"), which holds no bytes of the torrent, as libtorrent
// takes it; else its length.
func fileSize(f *rawFile) int64 {
	if hasAttr(f.Attr, "l") {
		return 0
	}
	n, _ := Int(f.Length)
	return n
}

// checkTreeFile checks a file of a BEP 52 file tree at path: node is the
// dictionary holding it under the empty key, attrs its attributes and n
// its length. A file's node has no other entries (BEP 52: "it must not
// have any sibling entries"; else they would go unlisted); it is no BEP
// 47 pad file, attr "p" (BEP 52 aligns a file tree's files itself, so
// pads belong only in a hybrid's v1 "files"; libtorrent refuses one,
// torrent_invalid_pad_file); and a file of any bytes has a 32-byte
// "pieces root" (BEP 52: the root of its merkle tree of SHA-256 hashes).
// A file of no bytes (an empty file, or a symlink, which treeFiles gives
// 0 bytes) may have any pieces root or none: libtorrent 2.0.x
// (src/torrent_info.cpp, extract_single_file2) reads "pieces root" only
// when the file's size is above 0 and it has no symlink path, and takes
// the file whatever its root holds otherwise.
func checkTreeFile(path []string, node, attrs map[string]any, n int64) error {
	p := clipPath(path)
	if len(node) != 1 {
		return fmt.Errorf("%w: file tree file %q has %d sibling entries (BEP 52: none)", ErrInvalid, p, len(node)-1)
	}
	if treeAttr(attrs, "p") {
		return fmt.Errorf("%w: file tree file %q is a pad file, attr \"p\" (BEP 52 file trees have none)", ErrInvalid, p)
	}
	if n == 0 {
		return nil // no bytes to hash: libtorrent never reads its pieces root
	}
	root, has := attrs["pieces root"]
	s, isStr := root.(string)
	switch {
	case !has:
		return fmt.Errorf("%w: file tree file %q of %d bytes has no pieces root (BEP 52)", ErrInvalid, p, n)
	case !isStr || len(s) != 32:
		return fmt.Errorf("%w: file tree file %q has a pieces root that is not 32 bytes (BEP 52: a SHA-256 hash)", ErrInvalid, p)
	}
	return nil
}

// treeAttr reports whether a file tree file's attributes hold the BEP 47
// attribute c: an attr string holding it ("l" a symlink, "p" a pad).
func treeAttr(attrs map[string]any, c string) bool {
	s, ok := attrs["attr"].(string)
	return ok && strings.Contains(s, c)
}

// maxErrPath bounds the path an error names: a peer's path may take
// most of --max-metadata-size, and the error becomes a results row's
// detail (merge refuses one over 64 KiB).
const maxErrPath = 256

// clipPath is path joined with "/", cut to its first maxErrPath bytes
// and "..." when longer, for an error message.
func clipPath(path []string) string {
	p := strings.Join(path, "/")
	if len(p) > maxErrPath {
		return p[:maxErrPath] + "..."
	}
	return p
}
