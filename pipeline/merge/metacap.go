package merge

import (
	"errors"
	"fmt"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/internal/exitcode"
)

// Options.MaxMetadataSize caps an info dictionary merge takes, as fetch's
// --max-metadata-size caps what fetch accepts from a peer: fetch never
// writes a larger one, but merge read whatever a results file held. One
// of 100 MiB that zstd shrank to 28 KB (its SHA-1 the row's hash) took
// 12.9 s and up to 1 GB: the page read whole (~210 MB), its decoding
// (~240 MB), the torrents file (~436 MB). A row over the cap refuses the
// whole file (bad input: nothing committed). It is checked as early as
// the bytes allow: a Parquet page of the metadata columns from its header
// (rowio.Limits.MaxValueBytes), before it is read; an Arrow record
// batch's buffer of them from the length it declares (uncompressed: a
// compressed buffer's first 8 bytes), before it is allocated or
// decompressed (a 64 MiB dictionary that zstd shrank to 13 KB made merge
// allocate 141 MiB before its row was refused; now 3.4 MiB); then each
// row's info_bytes, before they are hashed and decoded.

// DefaultMaxMetadataSize and MaxMetadataSizeLimit are fetch's (10 MiB,
// 1 GiB): fetch's tests import merge, so merge cannot import fetch
// (app's TestMergeMaxMetadataSizeIsFetchs keeps them equal).
const (
	DefaultMaxMetadataSize = 10 << 20
	MaxMetadataSizeLimit   = 1 << 30
)

// metaHint says how to take a file written under a larger cap;
// fromHint, a dataset merged under one (merge --from).
const (
	metaHint = "a results file written by fetch --max-metadata-size N needs the same N here"
	fromHint = "a dataset merged with --max-metadata-size N needs the same N here"
)

// checkMaxMetadataSize refuses a cap outside fetch's bounds.
func checkMaxMetadataSize(n int64) error {
	if n < 1 || n > MaxMetadataSizeLimit {
		return exitcode.BadInput(fmt.Errorf("merge: --max-metadata-size: %d is outside 1-%d (1 GiB)", n, MaxMetadataSizeLimit))
	}
	return nil
}

// resultLimits are the limits a Parquet results file is read within:
// rowio's defaults, values of the metadata columns of at most max bytes
// (info_bytes) or twice that (what is taken from an info dictionary: a
// name or a file's path is part of it, and its UTF-8 rendering, where
// strings.ToValidUTF8 puts 3 bytes for each run of bytes that are not
// UTF-8, is at most about twice as long), none when max is 0, and the
// other string columns' fixed bounds (fieldBound).
func resultLimits(max int64) rowio.Limits {
	lim := rowio.DefaultLimits()
	lim.MaxValueBytes = func(path []string) int64 {
		switch leaf := path[len(path)-1]; {
		case len(path) == 1 && leaf == "info_bytes":
			return max
		case len(path) == 1 && (leaf == "name" || leaf == "name_raw"),
			len(path) == 4 && path[0] == "files" && (leaf == "path" || leaf == "path_raw"):
			return 2 * max
		}
		return fieldBound(path)
	}
	return lim
}

// metaPageError rewords a page of in (or an Arrow record batch's buffer)
// that rowio refused as over resultLimits, naming the flag or the
// column's fixed bound; other errors are returned as they are.
func metaPageError(in input, max int64, err error) error {
	return capPageError("merge: "+in.name, metaHint, max, err)
}

// capPageError is metaPageError for the file named in prefix ("merge:
// FILE", or FILE alone), with hint saying how to take it.
func capPageError(prefix, hint string, max int64, err error) error {
	e, ok := errors.AsType[*rowio.ValueLimitError](err)
	if !ok {
		return err
	}
	unit := "a page of " + e.Column
	if e.Batch { // an Arrow stream's
		unit = "a record batch's " + e.Column + " buffer"
	}
	bound := fmt.Sprintf("--max-metadata-size %d", max)
	if fixed := fieldPageBound(e.Column, e.Limit); fixed != "" {
		bound, hint = fixed, ""
	} else if e.Limit != max {
		bound = fmt.Sprintf("%d bytes a value (twice --max-metadata-size %d)", e.Limit, max)
	}
	values := fmt.Sprintf("%d values", e.Values)
	if e.Values == 1 {
		values = "1 value"
	}
	if hint != "" {
		hint = " (" + hint + ")"
	}
	return exitcode.BadInput(fmt.Errorf("%s: %s: %s declares %d bytes for %s, over %s%s",
		prefix, e.Where(), unit, e.Bytes, values, bound, hint))
}

// checkMetaSize refuses row n of in (counted from 1) when its info_bytes
// are over max.
func checkMetaSize(in input, n int64, res *result, max int64) error {
	if size := int64(len(res.InfoBytes)); size > max {
		return exitcode.BadInput(fmt.Errorf("merge: %s: row %d: %s: info_bytes of %d bytes, over --max-metadata-size %d (%s)",
			in.name, n, schema.Hex(res.InfoHash), size, max, metaHint))
	}
	return nil
}

// checkTorrentMeta refuses row n (counted from 1) of the other dataset's
// torrents file path (merge --from) when its info_bytes are over max; the
// caller adds "merge --from: ".
func checkTorrentMeta(path string, n int64, t *schema.Torrent, max int64) error {
	if size := int64(len(t.InfoBytes)); size > max {
		return exitcode.BadInput(fmt.Errorf("%s: row %d: %s: info_bytes of %d bytes, over --max-metadata-size %d (%s)",
			path, n, schema.Hex(t.InfoHash), size, max, fromHint))
	}
	return nil
}

// checkTorrentFields refuses row n (counted from 1) of the other
// dataset's torrents file path (merge --from) when its served_by is over
// its bound, or its name or a file's path (either form) over twice max,
// their page's bound (resultLimits): merge stores those as they are; the
// caller adds "merge --from: ".
func checkTorrentFields(path string, n int64, t *schema.Torrent, max int64) error {
	if len(t.ServedBy) > schema.MaxPeerAddrBytes {
		return exitcode.BadInput(fmt.Errorf("%s: row %d: %s: served_by of %d bytes, over its bound of %d bytes",
			path, n, schema.Hex(t.InfoHash), len(t.ServedBy), schema.MaxPeerAddrBytes))
	}
	over := func(column string, size int) error {
		return exitcode.BadInput(fmt.Errorf("%s: row %d: %s: %s of %d bytes, over %d bytes (twice --max-metadata-size %d) (%s)",
			path, n, schema.Hex(t.InfoHash), column, size, 2*max, max, fromHint))
	}
	switch {
	case t.Name != nil && int64(len(*t.Name)) > 2*max:
		return over("name", len(*t.Name))
	case int64(len(t.NameRaw)) > 2*max:
		return over("name_raw", len(t.NameRaw))
	}
	for i := range t.Files {
		switch f := &t.Files[i]; {
		case int64(len(f.Path)) > 2*max:
			return over(fmt.Sprintf("files[%d].path", i), len(f.Path))
		case int64(len(f.PathRaw)) > 2*max:
			return over(fmt.Sprintf("files[%d].path_raw", i), len(f.PathRaw))
		}
	}
	return nil
}
