package obsgen

import (
	"bufio"
	"context"
	"fmt"

	"github.com/infohash/infohash/formats/fsutil"
	"github.com/infohash/infohash/formats/rowio"
	"github.com/infohash/infohash/formats/schema"
)

// Style selects the physical layout of a generated Parquet file.
type Style int

const (
	// Native is what infohash writes: schema.Observation with
	// rowio.ParquetOptions (FIXED_LEN_BYTE_ARRAY(20) hashes, UTC
	// millisecond timestamps).
	Native Style = iota
	// DuckDB mimics a file DuckDB's COPY writes: every column optional,
	// info_hash a plain BYTE_ARRAY (BLOB), observed_at INT64 microseconds
	// without the UTC flag.
	DuckDB
)

// DuckObservation is an observation row laid out as DuckDB writes it.
type DuckObservation struct {
	InfoHash   []byte `parquet:"info_hash,optional"`
	InfoHashV2 []byte `parquet:"info_hash_v2,optional"`
	HashType   int8   `parquet:"hash_type,optional,int(8)"`
	ObservedAt int64  `parquet:"observed_at,optional,timestamp(microsecond:local)"`
	Source     string `parquet:"source,optional"`
	NodeAddr   string `parquet:"node_addr,optional"`
	NodeID     []byte `parquet:"node_id,optional"`
	PeerPort   int32  `parquet:"peer_port,optional"`
	RunID      string `parquet:"run_id,optional"`
}

// batchRows is how many rows travel between the generating and the
// writing goroutine at a time.
const batchRows = 64 * 1024

// WriteParquet generates cfg's rows into a Parquet file at path (written
// atomically) and returns the ground truth.
func WriteParquet(ctx context.Context, path string, cfg Config, style Style) (Truth, error) {
	g, err := New(cfg)
	if err != nil {
		return Truth{}, err
	}
	switch style {
	case Native:
		w, err := rowio.Create[schema.Observation](path, nil)
		if err != nil {
			return Truth{}, err
		}
		err = pump(ctx, g, func(rows []schema.Observation) error { return w.Write(rows) })
		return finish(g, w, err)
	case DuckDB:
		w, err := rowio.Create[DuckObservation](path, nil)
		if err != nil {
			return Truth{}, err
		}
		out := make([]DuckObservation, batchRows)
		hashes := make([]byte, 20*batchRows)
		err = pump(ctx, g, func(rows []schema.Observation) error {
			for i := range rows {
				toDuck(&out[i], &rows[i], hashes[20*i:20*i+20:20*i+20])
			}
			return w.Write(out[:len(rows)])
		})
		return finish(g, w, err)
	}
	return Truth{}, fmt.Errorf("obsgen: unknown style %d", style)
}

func toDuck(d *DuckObservation, o *schema.Observation, hash []byte) {
	copy(hash, o.InfoHash[:])
	*d = DuckObservation{
		InfoHash:   hash,
		InfoHashV2: o.InfoHashV2,
		HashType:   o.HashType,
		ObservedAt: o.ObservedAt * 1000,
		Source:     o.Source,
		NodeAddr:   o.NodeAddr,
		NodeID:     o.NodeID,
		PeerPort:   o.PeerPort,
		RunID:      o.RunID,
	}
}

type closer interface {
	Close() error
	Abort()
}

func finish(g *Generator, w closer, err error) (Truth, error) {
	if err != nil {
		w.Abort()
		return Truth{}, err
	}
	if err := w.Close(); err != nil {
		return Truth{}, err
	}
	return g.Truth(), nil
}

// pump runs the generator in its own goroutine, two batches ahead of
// write, so that generation overlaps encoding.
func pump(ctx context.Context, g *Generator, write func([]schema.Observation) error) error {
	const depth = 2
	free := make(chan []schema.Observation, depth+1)
	full := make(chan []schema.Observation, depth)
	for range depth + 1 {
		free <- make([]schema.Observation, batchRows)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(full)
		for {
			var buf []schema.Observation
			select {
			case buf = <-free:
			case <-stop:
				return
			}
			n := g.Next(buf)
			if n == 0 {
				return
			}
			select {
			case full <- buf[:n]:
			case <-stop:
				return
			}
		}
	}()
	for rows := range full {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := write(rows); err != nil {
			return err
		}
		free <- rows[:cap(rows)]
	}
	return ctx.Err()
}

// TextFormat selects how WriteText renders each hash.
type TextFormat int

const (
	// Hex writes 40 lowercase hex digits per line.
	Hex TextFormat = iota
	// Magnet writes magnet:?xt=urn:btih:… URIs.
	Magnet
	// Mixed alternates: every third line a magnet URI, the others hex
	// (upper case every seventh line).
	Mixed
)

// WriteText writes one line per generated row (repeats included) to path,
// as fsutil.CreateOutput writes an output (a file atomically, through a
// symbolic link to its target; a device or FIFO in place), and returns
// the ground truth. Timestamps and sources are
// not in the file; a v2 hash appears as its 20-byte truncation.
func WriteText(ctx context.Context, path string, cfg Config, format TextFormat) (Truth, error) {
	g, err := New(cfg)
	if err != nil {
		return Truth{}, err
	}
	f, err := fsutil.CreateOutput(path)
	if err != nil {
		return Truth{}, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var line int64
	err = pump(ctx, g, func(rows []schema.Observation) error {
		for i := range rows {
			hx := schema.Hex(rows[i].InfoHash)
			switch {
			case format == Magnet || format == Mixed && line%3 == 2:
				fmt.Fprintf(bw, "magnet:?xt=urn:btih:%s&dn=obsgen-%d\n", hx, line)
			case format == Mixed && line%7 == 3:
				fmt.Fprintf(bw, "%X\n", rows[i].InfoHash[:])
			default:
				bw.WriteString(hx)
				bw.WriteByte('\n')
			}
			line++
		}
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		f.Abort()
		return Truth{}, fmt.Errorf("obsgen: %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return Truth{}, err
	}
	return g.Truth(), nil
}

// Count runs the generator without writing anything and returns the
// ground truth of the file cfg describes.
func Count(ctx context.Context, cfg Config) (Truth, error) {
	g, err := New(cfg)
	if err != nil {
		return Truth{}, err
	}
	buf := make([]schema.Observation, batchRows)
	for g.Next(buf) > 0 {
		if err := ctx.Err(); err != nil {
			return Truth{}, err
		}
	}
	return g.Truth(), nil
}
