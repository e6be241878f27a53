package schema

// ResultMeta is the metadata columns of a fetch result: Meta's columns,
// each of them nullable. An ok result holds the torrent's metadata
// (OKMeta); every other outcome (a failure, released) knows nothing of
// the torrent and holds null in all of them, so that a failed result's
// files is null, not [] (a torrent without files), and its
// name_utf8_valid and private null, not false.
//
// In Meta, name_utf8_valid and private are required booleans and files a
// required list: a torrents row always knows them. Results files written
// before this had the same columns, required, holding false, false and []
// on every failure; readers take either (rowio reads a required column
// into a nullable field), and merge keeps no metadata of a failure.
type ResultMeta struct {
	Name          *string `parquet:"name,optional"`
	NameRaw       []byte  `parquet:"name_raw,optional"` // nil is null; empty (non-nil) is an empty name
	NameUTF8Valid *bool   `parquet:"name_utf8_valid,optional"`
	TotalSize     *int64  `parquet:"total_size,optional"`
	PieceLength   *int64  `parquet:"piece_length,optional"`
	FileCount     *int32  `parquet:"file_count,optional"`
	Files         []File  `parquet:"files,optional,list"` // nil is null; empty (non-nil) is no files
	Private       *bool   `parquet:"private,optional"`
	InfoBytes     []byte  `parquet:"info_bytes,optional"` // the verified bencoded info dictionary
}

// OKMeta is m, metadata known whole, as an ok result's columns: both
// booleans set, and a nil file list (no files, in a Meta) an empty one.
func OKMeta(m Meta) ResultMeta {
	files := m.Files
	if files == nil {
		files = []File{}
	}
	return ResultMeta{Name: m.Name, NameRaw: m.NameRaw, NameUTF8Valid: new(m.NameUTF8Valid), TotalSize: m.TotalSize,
		PieceLength: m.PieceLength, FileCount: m.FileCount, Files: files, Private: new(m.Private), InfoBytes: m.InfoBytes}
}

// Meta is r's columns as a torrent's Meta, a null boolean read as false
// (for an ok result written by OKMeta, r's own values).
func (r *ResultMeta) Meta() Meta {
	return Meta{Name: r.Name, NameRaw: r.NameRaw, NameUTF8Valid: r.NameUTF8Valid != nil && *r.NameUTF8Valid,
		TotalSize: r.TotalSize, PieceLength: r.PieceLength, FileCount: r.FileCount, Files: r.Files,
		Private: r.Private != nil && *r.Private, InfoBytes: r.InfoBytes}
}

// NameOr returns the name, or "" when it is null.
func (r *ResultMeta) NameOr() string {
	if r.Name == nil {
		return ""
	}
	return *r.Name
}
