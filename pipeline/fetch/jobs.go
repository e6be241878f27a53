package fetch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
	"github.com/infohash/infohash/formats/sniff"
	"github.com/infohash/infohash/formats/textenc"
)

// jobFields are the job columns besides info_hash. Only info_hash is
// required, so a plain list of hashes is a valid input; the planner's
// columns are used when present. info_hash_v2, a full v2 hash of
// info_hash, makes fetch verify against it (schema.Job.InfoHashV2).
type jobFields struct {
	InfoHashV2 []byte   `parquet:"info_hash_v2,optional"`
	HashType   int8     `parquet:"hash_type,optional,int(8)"`
	Attempt    int32    `parquet:"attempt,optional"`
	LeaseID    string   `parquet:"lease_id,optional"`
	LeaseUntil int64    `parquet:"lease_until,optional,timestamp(millisecond)"`
	Peers      []string `parquet:"peers,list"`
	AvoidPeers []string `parquet:"avoid_peers,list"`
}

// jobRow is a job as fetch reads it: info_hash as infohash writes it,
// FIXED_LEN_BYTE_ARRAY(20). The other inputs (a BYTE_ARRAY Parquet
// column, an Arrow stream) are read as blobJobRow and converted.
type jobRow struct {
	InfoHash schema.Hash `parquet:"info_hash"`
	jobFields
}

// blobJobRow is a job row whose info_hash is any binary: a Parquet
// BYTE_ARRAY, as DuckDB writes a BLOB column, or any binary type of an
// Arrow stream; its length is checked by blobHash.
type blobJobRow struct {
	InfoHash []byte `parquet:"info_hash"`
	jobFields
}

func (r jobRow) job() schema.Job {
	return schema.Job{InfoHash: r.InfoHash, InfoHashV2: r.InfoHashV2, HashType: r.HashType, Attempt: r.Attempt, LeaseID: r.LeaseID,
		LeaseUntil: r.LeaseUntil, Peers: r.Peers, AvoidPeers: r.AvoidPeers}
}

// jobReader reads the jobs of a Parquet file or of an Arrow IPC stream.
// Read and Unread belong to one goroutine; Close may come from another
// while a Read blocks (a stream that does not end), and then takes
// effect when that Read returns.
type jobReader struct {
	name  string
	read  func([]jobRow) (int, error)
	close func() error
	meta  func(key string) (string, bool) // the file's or stream's key-value metadata
	total int64                           // rows in the input: known for a Parquet file, -1 for a stream
	n     int64                           // rows returned so far
	bad   error                           // a row's peers were bad: sticky

	mu            sync.Mutex
	reading, shut bool
}

// openJobs opens path ("-": stdin) for reading jobs, telling by the
// first bytes what it holds (sniff.Of): Parquet (a file only), an Arrow
// IPC stream, or a text list of infohashes (hashList). A Parquet
// info_hash may be FIXED_LEN_BYTE_ARRAY(20) or, as DuckDB writes it,
// BYTE_ARRAY: a BLOB, or a VARCHAR of hex (40 or 64 digits, as dedup
// reads it); an Arrow one any binary type, or utf8 of hex. Either binary
// holds 20 bytes or a v2 hash's full 32 (blobHash). An info_hash_v2 of
// text is hex too (textCols). A compressed input is refused, saying how
// to give it to fetch writing to output (-o; "" when not known).
func openJobs(path string, stdin io.Reader, output string) (*jobReader, error) {
	if path == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		return openStream("stdin", bufio.NewReaderSize(stdin, 1<<20), func() error { return nil }, false, output)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	if head, _ := br.Peek(sniff.HeadSize); sniff.Of(head) != sniff.Parquet {
		jr, err := openStream(path, br, f.Close, true, output)
		if err != nil {
			f.Close()
		}
		return jr, err
	}
	f.Close()
	return openParquetJobs(path)
}

// openStream reads the jobs of an Arrow IPC stream or a hash list from
// br (a file when file is set, else stdin); closeIn closes what br reads.
// output is fetch's -o, for the hint refusing a compressed input.
func openStream(name string, br *bufio.Reader, closeIn func() error, file bool, output string) (*jobReader, error) {
	head, err := br.Peek(sniff.HeadSize)
	kind := sniff.Of(head)
	switch {
	case kind == sniff.Empty && err != nil && !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%s: %w", name, err)
	case kind == sniff.Empty:
		return nil, fmt.Errorf("%s: empty input%s", name, sniff.EmptyHint(!file))
	case kind == sniff.Compressed:
		return nil, compressedJobs(sniff.CompressionOf(head), name, file, output)
	case kind == sniff.Parquet:
		return nil, fmt.Errorf("%s: Parquet on stdin: name the file instead (stdin takes an Arrow IPC stream of jobs or a text list of infohashes)", name)
	case kind == sniff.Arrow:
		// Any binary info_hash: a 32-byte one is a full v2 hash (blobHash);
		// a utf8 one holds hex, as a VARCHAR in Parquet (textCols).
		r, err := rowio.OpenArrowText[blobJobRow](name, br, "info_hash", "info_hash_v2")
		if err != nil {
			return nil, err
		}
		jr := &jobReader{name: name, meta: r.Metadata, total: -1,
			close: func() error { r.Close(); return closeIn() }}
		s := r.ArrowSchema()
		jr.read = blobJobs(jr, r.Read, textCols{rowio.ArrowTextType(s, "info_hash"), rowio.ArrowTextType(s, "info_hash_v2")})
		return jr, nil
	case kind == sniff.Binary:
		if file {
			return nil, fmt.Errorf("%s: neither Parquet jobs, an Arrow IPC stream of jobs nor a text list of infohashes", name)
		}
		return nil, fmt.Errorf("%s: neither an Arrow IPC stream of jobs nor a text list of infohashes", name)
	}
	l := newHashList(name, br)
	return &jobReader{name: name, read: l.read, close: func() error { l.close(); return closeIn() }, total: -1,
		meta: func(string) (string, bool) { return "", false }}, nil
}

// compressedJobs refuses the jobs input name (a file when file is set,
// else stdin), compressed as c, saying how to give it to fetch:
// decompressed, on stdin, which takes an Arrow stream or a hash list but
// not Parquet, which must be decompressed into a file first. output is
// fetch's -o ("": FILE).
func compressedJobs(c *sniff.Compression, name string, file bool, output string) error {
	out := "FILE"
	if output != "" {
		out = sniff.ShellWord(output)
	}
	h := sniff.Hint{Name: name, Cmd: "infohash fetch - -o " + out, Note: "Parquet jobs: into a file, named as JOBS"}
	if file {
		h.Path = name
	}
	return c.Refuse(h)
}

// openParquetJobs reads the jobs of a Parquet file.
func openParquetJobs(path string) (*jobReader, error) {
	info, err := inspectJobs(path)
	if err != nil {
		return nil, err
	}
	jr := &jobReader{name: path, total: info.rows}
	if !info.blob {
		r, err := rowio.Open[jobRow](path, nil)
		if err != nil {
			return nil, err
		}
		jr.read, jr.close, jr.meta = r.Read, r.Close, r.Metadata
		if info.text.v2 != "" {
			jr.read = v2TextJobs(jr, r.Read, info.text.v2)
		}
	} else {
		r, err := rowio.Open[blobJobRow](path, nil)
		if err != nil {
			return nil, err
		}
		jr.read, jr.close, jr.meta = blobJobs(jr, r.Read, info.text), r.Close, r.Metadata
	}
	return jr, nil
}

// blobJobs converts the rows read (rows of jr's input whose info_hash is
// any binary) to jobRows, checking each hash with blobHash; a bad one
// fails the input, naming its row (counted from 0). The hash columns
// text names are hex, decoded first.
func blobJobs(jr *jobReader, read func([]blobJobRow) (int, error), text textCols) func([]jobRow) (int, error) {
	var tmp []blobJobRow
	var bad error // sticky, as rowio's own errors are
	return func(buf []jobRow) (int, error) {
		if bad != nil {
			return 0, bad
		}
		if cap(tmp) < len(buf) {
			tmp = make([]blobJobRow, len(buf))
		}
		n, err := read(tmp[:len(buf)])
		for i := range tmp[:n] {
			if herr := text.unhex(&tmp[i]); herr != nil {
				bad = fmt.Errorf("%s: row %d: %w", jr.name, jr.n+int64(i)+1, herr)
				return i, bad
			}
			h, typ, herr := blobHash(tmp[i].InfoHash)
			if herr != nil {
				bad = fmt.Errorf("%s: row %d: %w", jr.name, jr.n+int64(i)+1, herr)
				return i, bad
			}
			buf[i] = jobRow{InfoHash: h, jobFields: tmp[i].jobFields}
			if v2 := tmp[i].InfoHashV2; typ != 0 && len(v2) != 0 && !bytes.Equal(v2, tmp[i].InfoHash) {
				bad = fmt.Errorf("%s: row %d: info_hash_v2 differs from the row's 32-byte info_hash %x", jr.name, jr.n+int64(i)+1, tmp[i].InfoHash)
				return i, bad
			}
			if typ != 0 {
				buf[i].HashType = typ
				buf[i].InfoHashV2 = tmp[i].InfoHash // the full v2 hash (rowio allocates it anew each Read)
			}
		}
		return n, err
	}
}

// Metadata is the input's key-value metadata under key (jobsAvoidList
// reads plan-retries' avoid list there).
func (jr *jobReader) Metadata(key string) (string, bool) { return jr.meta(key) }

// jobsFile is what fetch needs to know of a jobs file's footer.
type jobsFile struct {
	blob bool     // info_hash is a BYTE_ARRAY column (DuckDB's BLOB or VARCHAR)
	text textCols // the hash columns of text (hex)
	rows int64    // rows in the file
}

// jobNames are the columns fetch reads of a jobs file.
var jobNames = rowio.Names(parquet.SchemaOf(blobJobRow{}))

// inspectJobs reads a Parquet file's footer.
func inspectJobs(path string) (jobsFile, error) {
	var info jobsFile
	f, err := os.Open(path)
	if err != nil {
		return info, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return info, err
	}
	// Its names as rowio.Open reads them: an INFO_HASH is info_hash.
	pf, err := rowio.OpenParquetFold(f, st.Size(), rowio.NoColumns, jobNames, rowio.DefaultLimits())
	if err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	if k := rowio.NestedKind(pf.Schema(), "info_hash"); k != "" {
		return info, fmt.Errorf("%s: %w: column \"info_hash\" is %s, want FIXED_LEN_BYTE_ARRAY(20), BLOB or hex VARCHAR", path, rowio.ErrSchema, k)
	}
	if c, ok := pf.Schema().Lookup("info_hash"); ok && c.Node.Leaf() && c.Node.Type().Kind() == parquet.ByteArray {
		info.blob, info.text.hash = true, rowio.TextType(c.Node.Type())
	}
	if c, ok := pf.Schema().Lookup("info_hash_v2"); ok && c.Node.Leaf() {
		info.text.v2 = rowio.TextType(c.Node.Type())
	}
	info.rows = pf.NumRows()
	return info, nil
}

// blobHash checks a BYTE_ARRAY info_hash: 20 bytes, or 32 for a v2 hash,
// which the DHT (and fetch) key by its first 20 bytes; typ is then
// HashV2, whatever the row's hash_type said, as dedup reads such rows,
// and the 32 bytes are the job's full v2 hash.
func blobHash(b []byte) (h schema.Hash, typ int8, err error) {
	var full [32]byte
	n, msg := textenc.HashValue(&full, "info_hash", "", b, true)
	switch n {
	case 0:
		return h, 0, errors.New(msg)
	case 32:
		typ = schema.HashV2
	}
	copy(h[:], full[:])
	return h, typ, nil
}

// jobPeersError says which of a job's peers is not an endpoint fetch may
// dial (peerAddrError), or is nil.
func jobPeersError(peers []string) error {
	for i, p := range peers {
		if err := peerAddrError(p); err != nil {
			return fmt.Errorf("peers[%d]: %w", i, err)
		}
	}
	return nil
}

// peerAddrError says why addr is not a peer endpoint, or is nil. An
// endpoint is what --peer takes (a host and a port 1-65535) and what
// merge takes in peer_failures (schema.PeerAddrOK: UTF-8, no space or
// newline): any other would be dialled in vain and make merge refuse the
// results.
func peerAddrError(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && host != "" && schema.PeerAddrOK(addr) {
		if n, perr := strconv.Atoi(port); perr == nil && n >= 1 && n <= 65535 {
			return nil
		}
	}
	return fmt.Errorf("%q is not a peer endpoint (HOST:PORT, port 1-65535, UTF-8, no space)", addr)
}

// jobV2Error says why a job's info_hash_v2 is not a full v2 hash of its
// info_hash (32 bytes, the first 20 of them info_hash): such a job names
// two hashes, and fetch would not know which to verify.
func jobV2Error(j *jobRow) error {
	v2 := j.InfoHashV2
	if msg := textenc.V2BytesError("info_hash_v2", len(v2)); msg != "" {
		return errors.New(msg)
	}
	if len(v2) == 32 && !bytes.Equal(v2[:20], j.InfoHash[:]) {
		return fmt.Errorf("info_hash_v2 %x does not start with the row's info_hash %x", v2, j.InfoHash)
	}
	return nil
}

// errClosed is what Read returns after Close.
var errClosed = errors.New("jobs input closed")

// Read fills buf with up to len(buf) jobs; io.EOF ends the input. A job
// whose peers are not all endpoints (jobPeersError) ends it with an error
// naming its row, returning the jobs before it.
func (r *jobReader) Read(buf []jobRow) (int, error) {
	r.mu.Lock()
	if r.shut {
		r.mu.Unlock()
		return 0, fmt.Errorf("%s: %w", r.name, errClosed)
	}
	r.reading = true
	r.mu.Unlock()
	n, err := 0, r.bad
	if r.bad == nil {
		n, err = r.read(buf)
		r.checkPeers(buf, &n, &err)
	}
	r.n += int64(n)
	r.mu.Lock()
	r.reading = false
	closeNow := r.shut
	r.mu.Unlock()
	if closeNow {
		_ = r.close()
	}
	return n, err
}

// checkPeers cuts the *n rows read into buf before the first whose peers,
// info_hash_v2 or lease_id are bad, making *err (and every later Read's)
// the error naming it.
func (r *jobReader) checkPeers(buf []jobRow, n *int, err *error) {
	for i := range buf[:*n] {
		perr := jobPeersError(buf[i].Peers)
		if perr == nil {
			perr = jobV2Error(&buf[i])
		}
		if perr == nil && !utf8.ValidString(buf[i].LeaseID) {
			// fetch writes it into its results' lease_id, a STRING
			// column (and plan-retries writes hex).
			perr = fmt.Errorf("lease_id %q is not valid UTF-8", buf[i].LeaseID)
		}
		if perr != nil {
			r.bad = fmt.Errorf("%s: row %d: %w", r.name, r.n+int64(i)+1, perr)
			*n, *err = i, r.bad
			return
		}
	}
}

// Unread reports how many jobs are left without reading them: known for
// a Parquet file (from its footer), not for a stream (ok false).
func (r *jobReader) Unread() (n int64, ok bool) {
	if r.total < 0 {
		return 0, false
	}
	return max(r.total-r.n, 0), true
}

// Close releases the input, at once or, when a Read is under way, as
// that Read returns.
func (r *jobReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shut {
		return nil
	}
	r.shut = true
	if r.reading {
		return nil
	}
	return r.close()
}
