package merge

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/dataset"
	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/inputdir"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/internal/exitcode"
	"github.com/infohash/infohash/internal/progress"
)

// inboxDir is where stdin is spooled before it is applied: a kill -9
// after the spool leaves the results there, and the next merge applies
// them. It is a folder of its own inside DIR/inbox, which dedup skips.
const inboxDir = "inbox/merge"

// input is one results file to apply.
type input struct {
	name  string // for messages
	path  string
	id    string // sha256 of the content
	inbox bool   // spooled: removed once applied
	// spooled names the stream this run spooled the input from (stdin,
	// or a pipe's path); "" for a file.
	spooled string
	data    string // the dataset's directory, for hints (compressedResults)
	maxMeta int64  // Options.MaxMetadataSize (0: none; metacap.go)
	// dataset is the id of the dataset merged into (its manifest's
	// DatasetID): a result whose lease_id names another is refused
	// (foreignLease), unless it names one of ancestors, the ids the
	// dataset had before copies of it were given their own
	// (Manifest.AncestorIDs) and, if passes records that ancestor's
	// passes (Manifest.AncestorPasses), is of one of them.
	dataset   string
	ancestors []string
	passes    map[string][]string
	// release drops the lock the run holds on a spool in the inbox,
	// its own (from its creation) or a leftover it took
	// (dataset.ClaimLeftover), once it has committed it or given it up
	// (releaseAll); nil for other inputs.
	release func()
}

// resolveInputs expands folders, spools stdin and picks up spooled input
// that a killed run left behind. The run holds the lock of each spool
// among the inputs until it calls releaseAll.
func resolveInputs(ctx context.Context, d *dataset.Dataset, args []string, stdin io.Reader) (out []input, err error) {
	inbox := d.Path(inboxDir)
	defer func() {
		if err != nil {
			releaseAll(out)
			out = nil
		}
	}()
	for _, a := range args {
		if a == "-" {
			p, release, err := spoolHeld(ctx, inbox, "stdin", stdin)
			if err != nil {
				return out, fmt.Errorf("merge: stdin: %w", err)
			}
			// Named "stdin": its spool is gone once applied (or empty);
			// setAside and keptNote name it where it stays.
			out = append(out, input{name: "stdin", path: p, inbox: true, spooled: "stdin", release: release})
			continue
		}
		info, err := os.Stat(a)
		if err != nil {
			return out, exitcode.BadInput(fmt.Errorf("merge: %w", err))
		}
		if fsutil.ReadOnce(info.Mode()) {
			// An input is read twice (checksum, then rows): a pipe ("merge
			// <(fetch ... -o -)") is spooled once, like stdin.
			in, err := spoolPipe(ctx, inbox, a)
			if err != nil {
				return out, err
			}
			out = append(out, in)
			continue
		}
		if !info.IsDir() {
			if !info.Mode().IsRegular() {
				return out, exitcode.BadInput(fmt.Errorf("merge: %s: not a regular file", a))
			}
			// A partial input set aside in the inbox is removed once
			// applied, as a spool is: status lists it until then.
			out = append(out, input{name: a, path: a, inbox: dataset.IsPartial(inbox, a)})
			continue
		}
		if err := notADataset(a); err != nil {
			return out, err
		}
		// A folder gives its Parquet files and Arrow streams; one that
		// holds none gives nothing (Run: nothing to do).
		files, err := inputdir.Files("merge", a, "a folder is read for its Parquet and Arrow files")
		if err != nil {
			return out, exitcode.BadInput(err)
		}
		sort.Strings(files)
		for _, p := range files {
			// A FIFO in the folder, which would block the checksum, is
			// inputdir's error.
			out = append(out, input{name: p, path: p})
		}
	}
	// What a run killed while spooling had read is set aside
	// (dataset.Salvage); every whole leftover is applied, unless a live
	// run holds it: its own spool, or a leftover it applies
	// (dataset.ClaimLeftover).
	if _, err := dataset.Salvage(inbox, ".results"); err != nil {
		return out, fmt.Errorf("merge: %w", err)
	}
	ents, _ := os.ReadDir(inbox)
	for _, e := range ents {
		p := filepath.Join(inbox, e.Name())
		if !dataset.IsSpool(e, ".results") || spooled(out, p) { // only a run's own spools are taken
			continue
		}
		release, ok, err := dataset.ClaimLeftover(p)
		if err != nil {
			slog.Warn("merge: a leftover in the inbox cannot be locked; left for a later run", "file", p, "err", err)
			continue
		}
		if ok {
			out = append(out, input{name: "leftover " + p, path: p, inbox: true, release: release}) // under --data as given
		}
	}
	for i := range out {
		id, err := checksum(out[i].path)
		if err != nil {
			return out, exitcode.BadInput(fmt.Errorf("merge: %s: %w", out[i].name, err))
		}
		out[i].id, out[i].data = id, d.Dir
	}
	return out, nil
}

// releaseAll drops the locks the run holds on the spools among ins (its
// own and the leftovers it took): a run calls it once it has committed
// them (and removed them) or given them up.
func releaseAll(ins []input) {
	for _, in := range ins {
		if in.release != nil {
			in.release()
		}
	}
}

// keptNote adds to err where the streams among ins that were spooled
// wait (dataset.KeptNote).
func keptNote(err error, ins []input) error {
	var spools []dataset.SpooledInput
	for _, in := range ins {
		if in.spooled != "" {
			spools = append(spools, dataset.SpooledInput{From: in.spooled, Path: in.path})
		}
	}
	return dataset.KeptNote(err, "merge", spools)
}

func spooled(ins []input, p string) bool {
	for _, in := range ins {
		if in.path == p {
			return true
		}
	}
	return false
}

// checksum is the ledger id of the input at path: the SHA-256 of its
// bytes, as hex (merge's, fixed for good: see dataset.Applied).
func checksum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// result is a row of an input as merge keeps it while it applies it:
// an ok result's metadata is in the spill (meta), not in the row.
type result struct {
	schema.Result
	meta metaRef
}

// infoLen is the length of an ok result's info dictionary.
func (r *result) infoLen() int64 {
	if r.meta.spilled() {
		return r.meta.infoLen
	}
	return int64(len(r.InfoBytes))
}

// readResultsTo reads every result of in, Parquet or Arrow IPC (told
// apart by their first bytes), checks each row and hands it to emit
// (which keeps a copy, if any), counting it on prog (nil: none); it
// returns how many rows it read (on error, those emitted are to be
// dropped). Failed results keep no metadata; ok results put theirs in sp
// (unless sp is nil: the rows keep it). A decoder that panics on a
// malformed file (parquet-go does on some corrupt page indexes) makes it
// bad input (rowio.PanicError), not a crash. Every error about the input
// itself is bad input (exit 2); one of the spill is not.
//
// An Arrow stream cut mid-message (fetch killed while writing a batch)
// after some whole batches is not bad input: the rows read are those of
// its batches, and cut says where the stream ends. Applying them is
// safe, as applying any results is (a result counts once per lease), and the jobs
// whose rows were cut off stay leased until lease_until. A stream cut
// before its first whole batch holds nothing to apply: bad input. A
// stream merge spooled (stdin, a pipe, a leftover spool) that ends
// between two messages without its end-of-stream marker (fetch killed
// between two batches) is taken for cut there (a CutError with NoEnd):
// its batches are applied, and the run is partial, as for a cut one. A
// file named as RESULTS is read as it is.
func readResultsTo(in input, sp *metaSpill, prog *progress.Reporter, emit func(*result)) (n int64, cut *rowio.CutError, err error) {
	defer func() {
		if p := recover(); p != nil {
			n, cut, err = 0, nil, exitcode.BadInput(fmt.Errorf("merge: %s: %w", in.name, rowio.PanicError(p, "fetch results")))
		}
	}()
	return decodeResults(in, sp, prog, emit)
}

// Rows are read in batches of up to maxReadRows, fewer when they carry
// metadata: a batch holds about readBatchBytes of it (by the previous
// batch's rows; the first batch is one row). 256 rows of 4 MiB info
// dictionaries made a batch of 1 GiB.
const (
	maxReadRows    = 256
	readBatchBytes = 4 << 20
)

func decodeResults(in input, sp *metaSpill, prog *progress.Reporter, emit func(*result)) (int64, *rowio.CutError, error) {
	f, err := os.Open(in.path)
	if err != nil { // names the path
		return 0, nil, exitcode.BadInput(fmt.Errorf("merge: %w", err))
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	head, _ := br.Peek(sniff.HeadSize)
	var r resultSource
	switch sniff.Of(head) {
	case sniff.Parquet:
		blob, cols, perr := plausibleParquet(in.path)
		if perr != nil {
			return 0, nil, exitcode.BadInput(fmt.Errorf("merge: %s: %w", in.name, perr))
		}
		if err := hiveError(in, cols); err != nil {
			return 0, nil, err
		}
		r, err = openParquetResults(in.path, in.name, blob, resultLimits(in.maxMeta))
	case sniff.Arrow:
		var herr error
		if r, herr, err = openArrowResults(in, br); herr != nil {
			return 0, nil, herr
		}
	case sniff.Empty:
		return 0, nil, exitcode.BadInput(fmt.Errorf("merge: %s: empty input%s", in.name, sniff.EmptyHint(in.inbox)))
	case sniff.Compressed:
		return 0, nil, compressedResults(sniff.CompressionOf(head), in)
	default:
		return 0, nil, exitcode.BadInput(fmt.Errorf("merge: %s: neither Parquet nor an Arrow IPC stream of fetch results", in.name))
	}
	// rowio's errors begin with the input's name (a Parquet file's path),
	// as do its Read errors below.
	if err != nil {
		if merr := metaPageError(in, in.maxMeta, err); merr != err {
			return 0, nil, merr
		}
		var se *rowio.SchemaError
		if errors.As(err, &se) && !slices.Contains(se.Columns, "outcome") {
			return 0, nil, exitcode.BadInput(fmt.Errorf("merge: %s: %w", in.name, notResults(se.Columns)))
		}
		return 0, nil, exitcode.BadInput(fmt.Errorf("merge: %w", err))
	}
	defer r.Close()
	var read int64
	buf := make([]schema.Result, maxReadRows)
	rows := 1
	var differ int64 // ok rows whose metadata columns info_bytes contradict
	var firstDiffer schema.Hash
	var invalid int64 // ok rows made invalid_metadata (failInvalid)
	var firstInvalid schema.Hash
	var invalidDetail string
	for {
		n, err := r.Read(buf[:rows])
		heavy := int64(0)
		for i := range buf[:n] {
			res := result{Result: buf[i]}
			buf[i] = schema.Result{} // the batch keeps no metadata
			heavy += metaBytes(&res.ResultMeta)
			if in.maxMeta > 0 { // before info_bytes are hashed or decoded
				if err := checkMetaSize(in, read+1, &res, in.maxMeta); err != nil {
					return 0, nil, err
				}
			}
			if err := checkFields(in, read+1, &res.Result); err != nil {
				return 0, nil, err
			}
			if err := checkResult(&res.Result); err != nil {
				return 0, nil, exitcode.BadInput(fmt.Errorf("merge: %s: row %d: %w", in.name, read+1, err))
			}
			if err := foreignLease(in, &res.Result); err != nil {
				return 0, nil, exitcode.BadInput(fmt.Errorf("merge: %s: row %d: %w", in.name, read+1, err))
			}
			if res.Outcome != schema.OutcomeOK {
				res.ResultMeta, res.InfoHashV2 = schema.ResultMeta{}, nil
			} else if differs, err := deriveMeta(&res.Result); err != nil {
				if invalid == 0 {
					firstInvalid, invalidDetail = res.InfoHash, err.Error()
				}
				invalid++
				failInvalid(&res.Result, err)
			} else if differs {
				if differ == 0 {
					firstDiffer = res.InfoHash
				}
				differ++
			}
			if res.Outcome == schema.OutcomeReleased {
				res.PeerFailures = nil // no attempt: nobody to penalise
			}
			if res.Outcome != schema.OutcomePeersPenalised {
				res.RetryAfter = 0 // null on every other row: nothing reads it
			}
			if res.Outcome == schema.OutcomeOK && sp != nil {
				m := res.Meta()
				ref, err := sp.put(&m)
				if err != nil {
					return 0, nil, fmt.Errorf("merge: %s: row %d: spilling its metadata: %w", in.name, read+1, err)
				}
				res.ResultMeta, res.meta = schema.ResultMeta{}, ref
			}
			emit(&res)
			read++
		}
		if n > 0 {
			rows = int(min(max(readBatchBytes*int64(n)/max(heavy, 1), 1), maxReadRows))
			prog.Add(int64(n))
		}
		if errors.Is(err, io.EOF) {
			warnDiffer(in.name, differ, firstDiffer)
			warnInvalid(in.name, invalid, firstInvalid, invalidDetail)
			return read, nil, nil
		}
		if cut, ok := rowio.AsCut(err); ok && cut.Rows > 0 {
			warnDiffer(in.name, differ, firstDiffer)
			warnInvalid(in.name, invalid, firstInvalid, invalidDetail)
			return read, cut, nil
		}
		if err != nil {
			if merr := metaPageError(in, in.maxMeta, err); merr != err {
				return 0, nil, merr // a record batch over a bound
			}
			return 0, nil, exitcode.BadInput(fmt.Errorf("merge: %w", err))
		}
	}
}

// metaBytes is the size of m's variable-length fields.
func metaBytes(m *schema.ResultMeta) int64 {
	n := len(m.NameOr()) + len(m.NameRaw) + len(m.InfoBytes)
	for i := range m.Files {
		n += len(m.Files[i].Path) + len(m.Files[i].PathRaw) + 8
	}
	return int64(n)
}

// notResults says that a file with these columns is not fetch's results
// and, when its columns tell, what it is instead.
func notResults(cols []string) error {
	hint := ""
	if k := schema.KindOfColumns(cols); k != "" {
		hint = "is it " + k + "? "
	}
	return fmt.Errorf("not a results file: missing required column outcome (%smerge takes fetch's results)", hint)
}

// maxChunkBytes bounds the uncompressed size of one column chunk of a
// results file, checked before its rows are decoded.
const maxChunkBytes = 1 << 30

// plausibleParquet checks a Parquet file's column chunk sizes, and
// reports whether its info_hash is a BYTE_ARRAY column (as DuckDB writes
// a BLOB) rather than fetch's FIXED_LEN_BYTE_ARRAY(20), and its top-level
// columns.
// There is no bound on the compression ratio, nor on rows or values per
// byte of file: zstd shrinks a constant column (hash_type of 100,000 v1
// results: 400 kB) to a few hundred bytes, and dictionary or RLE encoding
// with zstd makes 1317 results for 42 hashes (or capture's observations)
// take under 10 bytes a row. rowio bounds what decoding may allocate from
// the rows and values the footer and every page header declare
// (Limits.MaxRows, MaxRowGroupRows, MaxPageValues, MaxPageBytes).
//
// The footer is read through rowio.OpenParquet, never parquet.OpenFile
// directly: parquet-go v0.32.0 allocates the footer length a file's last
// bytes claim (up to 4 GiB) before checking that it fits in the file, and
// decodes the footer trusting its list lengths and nesting, so a file of
// a few dozen bytes could take gigabytes or crash the process.
func plausibleParquet(path string) (blob bool, cols []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, nil, err
	}
	pf, err := rowio.OpenParquet(f, info.Size(), rowio.NoColumns, rowio.DefaultLimits())
	if err != nil {
		return false, nil, err
	}
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			// rowio.OpenParquet refused negative counts and sizes.
			if m := c.MetaData; m.TotalUncompressedSize > maxChunkBytes {
				return false, nil, fmt.Errorf("column %v declares %d bytes (%d compressed)",
					m.PathInSchema, m.TotalUncompressedSize, m.TotalCompressedSize)
			}
		}
	}
	c, ok := pf.Schema().Lookup("info_hash")
	return ok && c.Node.Leaf() && c.Node.Type().Kind() == parquet.ByteArray, rowio.Names(pf.Schema()), nil
}

// openParquetResults opens a results file within lim, reading a
// BYTE_ARRAY info_hash (blob) through blobResults.
// A column of text where a result holds bytes (name_raw, info_bytes, a
// file's path_raw) is wrong schema (rowio.TextBytesError), but for a BLOB
// info_hash's reader, which decodes hex text, and for info_hash_v2, whose
// text is hex too (v2Text).
func openParquetResults(path, name string, blob bool, lim rowio.Limits) (resultSource, error) {
	if !blob {
		r, err := rowio.OpenLimited[schema.Result](path, lim)
		if err == nil {
			err = textBytes(path, r, "info_hash_v2")
		}
		if err != nil {
			return nil, err
		}
		return v2Text(r, name, parquetTextType(r.ParquetSchema(), "info_hash_v2")), nil
	}
	r, err := rowio.OpenLimited[blobResult](path, lim)
	if err == nil {
		err = textBytes(path, r, "info_hash", "info_hash_v2")
	}
	if err != nil {
		return nil, err
	}
	s := r.ParquetSchema()
	return v2Text(&blobResults{r: r, name: name, text: parquetTextType(s, "info_hash")}, name, parquetTextType(s, "info_hash_v2")), nil
}

// textBytes is rowio.TextBytesError for r, a Parquet file at path, as
// the wrong schema the reader's own checks give (closing r then).
func textBytes[T any](path string, r *rowio.Reader[T], hex ...string) error {
	s := r.ParquetSchema()
	err := rowio.TextBytesError[T](s, hex...)
	if err == nil {
		return nil
	}
	r.Close()
	var cols []string
	for _, f := range s.Fields() {
		cols = append(cols, f.Name())
	}
	return fmt.Errorf("%s: %w", path, &rowio.SchemaError{Columns: cols, Err: err})
}

// warnDiffer logs once per input how many ok results held metadata columns
// that disagree with their info_bytes (merge stored what info_bytes say).
func warnDiffer(name string, differ int64, first schema.Hash) {
	if differ > 0 {
		slog.Warn("merge: metadata columns of ok results disagree with their info_bytes; stored what info_bytes say",
			"input", name, "rows", differ, "first", schema.Hex(first))
	}
}
