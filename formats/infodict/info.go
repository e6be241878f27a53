package infodict

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/anacrolix/torrent/bencode"

	"github.com/infohash/infohash/formats/schema"
)

// rawInfo is the part of an info dictionary Parse decodes. Names and paths
// are strings holding untrusted bytes; they are never used as local paths.
type rawInfo struct {
	NameB       bencode.Bytes `bencode:"name"`         // raw (nil when absent): Name when a string
	NameUTF8B   bencode.Bytes `bencode:"name.utf-8"`   // raw (nil when absent): NameUTF8 when a string
	Name        *string       `bencode:"-"`            // "name" when a string, else nil (parse sets it: names)
	NameUTF8    *string       `bencode:"-"`            // "name.utf-8" when a string, else nil (names)
	PieceLength *int64        `bencode:"piece length"` // nil when absent
	Pieces      bencode.Bytes `bencode:"pieces"`       // BEP 3: SHA-1 hashes, 20 bytes each
	Length      bencode.Bytes `bencode:"length"`
	Files       []rawFile     `bencode:"files"`
	Private     bencode.Bytes `bencode:"private"`
	FileTree    bencode.Bytes `bencode:"file tree"`    // BEP 52 (v2 and hybrid torrents)
	MetaVersion bencode.Bytes `bencode:"meta version"` // BEP 52: 2 in a v2 or hybrid dictionary
	Attr        bencode.Bytes `bencode:"attr"`         // BEP 47, of a single file (a "length"): "l" a symlink
}

type rawFile struct {
	Length bencode.Bytes `bencode:"length"`     // raw (nil when absent): a symlink's is never read (fileSize)
	Path   bencode.Bytes `bencode:"path"`       // raw: checkPath reads it when path.utf-8 is no list; storedPath
	PathU  bencode.Bytes `bencode:"path.utf-8"` // raw: checkPath, storedPath and a hybrid's check read it
	Attr   bencode.Bytes `bencode:"attr"`       // BEP 47: "p" marks a pad file, "l" a symlink; any type (not ours to refuse)
}

// ErrInvalid is wrapped by every error Parse returns.
var ErrInvalid = errors.New("invalid info dictionary")

// Parse decodes a verified info dictionary into a torrent's metadata
// columns (an ok result holds schema.OKMeta of them). It fails when the
// bytes are not one bencoded dictionary, when a dictionary at any level
// repeats a key (unsorted keys are accepted), when a field has the wrong
// type, when no file layout is present (length, files or file tree), or
// when a length is negative or the sizes overflow; and when BEP 3 or 52
// makes the dictionary invalid and libtorrent refuses it (see strict.go:
// a meta version above 2 or not an integer, meta version 2 without a
// file tree dictionary or a file tree dictionary without it, no name, a
// single file named by an empty name.utf-8, a file without a length or a
// path, a path.utf-8 list empty or holding no string, pieces not in
// 20-byte hashes, a v2 piece length or pieces root of the wrong size, a
// v2 file with siblings or marked a pad file; hybrid.go: a hybrid whose
// files and file tree differ).
//
// A BEP 47 symlink (a file whose "attr" string holds "l") holds no bytes
// of the torrent: its length is 0 in files and total_size, whatever its
// "length" says (libtorrent takes it so; strict.go, fileSize), a single
// file whose dictionary's own "attr" holds "l" too (singleSize).
//
// BEP 47 pad files (a "files" entry whose "attr" string holds "p") are
// left out of files, file_count and total_size: they are zeros a
// creator inserted to align the next file on a piece (a hybrid torrent
// has one after nearly every file), which no client presents to its user,
// and a torrent's files and size are what its user gets. They are still
// checked as any file (a negative length fails); info_bytes keeps them.
//
// A hybrid dictionary whose "files" is an empty list lists its file
// tree's files (libtorrent compares no views then and takes the file
// tree's; listTree).
//
// Everything the dictionary gives is set, zeros included (an empty name,
// no files, a size of 0; Files is nil for an empty v2 file tree, which a
// Meta reads as no files): only a missing "piece length" leaves
// piece_length null.
//
// name_raw keeps the name bytes as sent: those of "name", or of
// "name.utf-8" when "name" is absent or no string (libtorrent then names
// the torrent by it; a key of another type is as absent: names); name is
// the same bytes made valid UTF-8 (invalid sequences become U+FFFD) or,
// when those bytes are not UTF-8 and a valid "name.utf-8" is present,
// that. A file's path joins its raw path elements with "/": those of
// "path", or of "path.utf-8" when "path" holds none (storedPath).
func Parse(info []byte) (schema.Meta, error) {
	m, _, err := parse(info, false)
	return m, err
}

// ParseWithPads is Parse as it was before it left BEP 47 pad files out:
// they count in files, file_count and total_size. merge uses it to tell
// the columns of a result an older fetch wrote from columns rewritten.
// A symlink has 0 bytes here too (an older fetch counted its "length":
// merge warns of such a row, and stores 0).
func ParseWithPads(info []byte) (schema.Meta, error) {
	m, _, err := parse(info, true)
	return m, err
}

// parse is Parse (ParseWithPads with pads), which also returns the keys
// it decoded.
func parse(info []byte, pads bool) (m schema.Meta, raw rawInfo, err error) {
	if err := uniqueKeys(info); err != nil {
		return m, raw, err
	}
	if err := DecodeDict(info, &raw); err != nil {
		return m, raw, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	names(&raw)
	if err := checkMetaVersion(raw.MetaVersion); err != nil {
		return m, raw, err // BEP 52: before any other check
	}
	m, err = meta(info, &raw, pads)
	return m, raw, err
}

// private reads BEP 27's "private" key (raw bencode; nil when absent) as
// libtorrent does (src/torrent_info.cpp, parse_info_section:
// dict_find_int_value("private", 0) != 0): any integer but 0 marks the
// torrent private, and a value of another type is as absent. BEP 27 only
// writes "private=1"; anacrolix reads any integer but 0 so too.
func private(b []byte) bool {
	v, err := Int(b)
	return err == nil && v != 0
}

// names sets raw's Name and NameUTF8 to its "name" and "name.utf-8"
// when they are strings, and leaves either nil otherwise: libtorrent
// (src/torrent_info.cpp, torrent_info::parse_info_section for the
// torrent's name, extract_single_file at its top level for a single
// file's) reads each with dict_find_string, "name.utf-8" first and
// "name" when that is no string, so a key of another type is as absent
// (no name at all, neither a string, is refused: checkInfo).
func names(raw *rawInfo) {
	raw.Name, raw.NameUTF8 = stringOf(raw.NameB), stringOf(raw.NameUTF8B)
}

// stringOf is the bencoded value b (nil when absent) when it is a
// string, else nil.
func stringOf(b bencode.Bytes) *string {
	if b == nil {
		return nil
	}
	if v, err := decodeValue(b); err == nil {
		if s, ok := v.(string); ok {
			return &s
		}
	}
	return nil
}

// meta is the metadata columns of info, whose keys raw holds (pad files
// among them when pads).
func meta(info []byte, raw *rawInfo, pads bool) (m schema.Meta, err error) {
	if raw.PieceLength != nil && *raw.PieceLength < 0 {
		return m, fmt.Errorf("%w: negative piece length", ErrInvalid)
	}
	if err := checkInfo(raw); err != nil {
		return m, err
	}
	given := raw.Name
	if given == nil { // only a name.utf-8: its bytes (checkInfo refuses neither)
		given = raw.NameUTF8
	}
	m.NameRaw = append([]byte{}, *given...) // non-nil: an empty name is a name
	m.NameUTF8Valid = utf8.ValidString(*given)
	name := strings.ToValidUTF8(*given, "\uFFFD")
	if u := raw.NameUTF8; !m.NameUTF8Valid && u != nil && *u != "" && utf8.ValidString(*u) {
		name = *u
	}
	m.Name = &name
	m.PieceLength = raw.PieceLength
	m.Private = private(raw.Private)

	switch {
	case raw.Files != nil:
		m.Files, err = v1Files(raw.Files, pads)
	case raw.Length != nil:
		n, err := singleSize(raw)
		if err != nil {
			return m, err
		}
		m.Files = []schema.File{{Path: name, PathRaw: m.NameRaw, Length: n}}
	case raw.FileTree != nil:
		m.Files, err = v2Files(raw.FileTree)
	default:
		return m, fmt.Errorf("%w: no length, files or file tree", ErrInvalid)
	}
	if err != nil {
		return m, err
	}
	if raw.Files != nil || raw.Length != nil {
		// A hybrid's file tree (a dictionary only with meta version 2:
		// checkInfo) is checked as a v2 one's, and against the v1 files
		// (hybrid.go), unless "files" is an empty list: then the file
		// tree's files are listed (listTree).
		if t := raw.FileTree; len(t) > 0 && t[0] == 'd' {
			tree, err := treeFiles(t)
			if err != nil {
				return m, err
			}
			if raw.Files != nil && len(raw.Files) == 0 {
				if len(tree) > 0 {
					m.Files = listTree(tree)
				}
			} else if err := checkHybrid(raw, tree); err != nil {
				return m, err
			}
		}
	}
	var total int64
	for _, f := range m.Files {
		if f.Length > math.MaxInt64-total {
			return m, fmt.Errorf("%w: total size overflows", ErrInvalid)
		}
		total += f.Length
	}
	if total > 0 && raw.PieceLength != nil && *raw.PieceLength == 0 {
		return m, fmt.Errorf("%w: piece length 0 for %d bytes of files", ErrInvalid, total)
	}
	m.TotalSize, m.FileCount = &total, new(int32(len(m.Files)))
	m.InfoBytes = info
	return m, nil
}

// singleSize is the size of a single-file dictionary's file (a "length",
// no "files"): its length, an integer of at least 0, or 0 when the
// dictionary's own "attr" string holds "l" (a BEP 47 symlink), whatever
// its length holds: libtorrent (src/torrent_info.cpp, extract_single_file,
// top_level) reads the attributes of the info dictionary itself for a
// single file and gives a symlink 0 bytes without reading "length", as
// for a "files" entry (fileSize).
func singleSize(raw *rawInfo) (int64, error) {
	if hasAttr(raw.Attr, "l") {
		return 0, nil
	}
	n, err := Int(raw.Length)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: length %q", ErrInvalid, Clip(raw.Length))
	}
	return n, nil
}

// v1Files lists a "files" list's files, its pad files only when pads.
func v1Files(files []rawFile, pads bool) ([]schema.File, error) {
	out := make([]schema.File, 0, len(files))
	for i, f := range files {
		n, err := checkFile(i, &f)
		if err != nil {
			return nil, err
		}
		if !pads && isPad(f.Attr) {
			continue
		}
		p := strings.Join(storedPath(&f), "/")
		out = append(out, schema.File{Path: strings.ToValidUTF8(p, "\uFFFD"), PathRaw: []byte(p), Length: n})
	}
	return out, nil
}

// treeFile is a file of a BEP 52 file tree: its path elements and length.
type treeFile struct {
	path   []string
	length int64
}

// v2Files lists a BEP 52 file tree's files (treeFiles) as metadata
// columns.
func v2Files(tree bencode.Bytes) ([]schema.File, error) {
	files, err := treeFiles(tree)
	if err != nil {
		return nil, err
	}
	return listTree(files), nil
}

// listTree is the metadata columns' files of a file tree's files (nil
// when there are none).
//
// It also lists the files of a hybrid dictionary whose "files" is an
// empty list: its v1 view holds no file, and
// libtorrent (src/torrent_info.cpp, parse_info_section) compares the
// views only when the v1 one has files ("v1_files.num_files() > 0"),
// so it takes such a dictionary, under either hash, as the file tree's
// files; so do Parse and ParseAs, storing those files, their sizes and
// their count, as for the v2 dictionary it also is. (Its v1 "pieces",
// if any, hash no file a v1-only client would list; fetch verifies no
// piece.)
func listTree(files []treeFile) []schema.File {
	if len(files) == 0 {
		return nil
	}
	out := make([]schema.File, len(files))
	for i, f := range files {
		p := strings.Join(f.path, "/")
		out[i] = schema.File{Path: strings.ToValidUTF8(p, "\uFFFD"), PathRaw: []byte(p), Length: f.length}
	}
	return out
}

// treeFiles flattens a BEP 52 file tree: nested dictionaries keyed by path
// element, where a file is a dictionary with an empty key holding
// {"length": n, ...}. Files are listed in key order, whatever order the
// keys came in. A BEP 47 symlink (attr "l") has 0 bytes, whatever its
// "length" (none, negative, no integer, or any other): libtorrent
// (src/torrent_info.cpp, extract_single_file2) takes a symlink's size as
// 0 without reading "length".
func treeFiles(tree bencode.Bytes) ([]treeFile, error) {
	root, err := decodeValue(tree)
	if err != nil {
		return nil, fmt.Errorf("%w: file tree: %v", ErrInvalid, err)
	}
	var out []treeFile
	var walk func(node any, path []string) error
	walk = func(node any, path []string) error {
		dir, ok := node.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: file tree entry %q is not a dictionary", ErrInvalid, clipPath(path))
		}
		if leaf, ok := dir[""]; ok && len(path) > 0 {
			attrs, ok := leaf.(map[string]any)
			n, isInt := attrs["length"].(int64)
			if ok && treeAttr(attrs, "l") {
				n, isInt = 0, true // a symlink holds no bytes: libtorrent never reads its length
			}
			if !ok || !isInt || n < 0 {
				return fmt.Errorf("%w: file tree file %q has no valid length", ErrInvalid, clipPath(path))
			}
			if err := checkTreeFile(path, dir, attrs, n); err != nil {
				return err
			}
			out = append(out, treeFile{path: slices.Clone(path), length: n})
			return nil
		}
		keys := make([]string, 0, len(dir))
		for k := range dir {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := walk(dir[k], append(path, k)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// isPad reports whether a file's attr (raw bencode; nil when absent)
// marks a BEP 47 pad file: a string holding "p" (unknown characters are
// ignored, as BEP 47 says). attr of another type marks nothing.
func isPad(attr bencode.Bytes) bool { return hasAttr(attr, "p") }

// hasAttr reports whether a file's attr (raw bencode; nil when absent)
// is a string holding the BEP 47 attribute c.
func hasAttr(attr bencode.Bytes, c string) bool {
	v, err := decodeValue(attr)
	s, ok := v.(string)
	return err == nil && ok && strings.Contains(s, c)
}
