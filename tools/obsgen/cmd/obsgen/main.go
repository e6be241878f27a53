// Command obsgen writes synthetic DHT observations for tests and
// benchmarks: deterministic for a seed, Zipf-like repeats, exact ground
// truth.
//
//	obsgen --rows 10M --distinct 20% --seed 1 -o obs.parquet --ground-truth obs.json
//	obsgen --rows 200k --style duckdb -o duck.parquet
//	obsgen --rows 1M --known 20M --distinct 200k -o batch.parquet   # a batch over an existing state
//	obsgen --rows 10k --text hashes.txt --text-format mixed
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/infohash/infohash/tools/obsgen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "obsgen: %v\n", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stderr io.Writer) error {
	cfg := obsgen.DefaultConfig()
	fs := flag.NewFlagSet("obsgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rows := fs.String("rows", "1M", "observations to generate (200000, 200k, 10M, 1G)")
	distinct := fs.String("distinct", "20%", "new distinct hashes: a count or a percentage of rows")
	known := fs.String("known", "0", "hashes earlier files (same seed) introduced; repeats may hit them")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the hash universe and the rows")
	fs.Uint64Var(&cfg.Stream, "stream", 0, "tells apart files with the same seed and --known")
	fs.Float64Var(&cfg.ZipfS, "zipf-s", cfg.ZipfS, "Zipf exponent (> 1)")
	fs.Float64Var(&cfg.ZipfV, "zipf-v", cfg.ZipfV, "Zipf offset (≥ 1): rank k has weight (v+k)^-s")
	fs.IntVar(&cfg.V2PerMille, "v2-permille", cfg.V2PerMille, "v2 hashes per 1000")
	start := fs.String("start", cfg.Start.Format(time.RFC3339), "observed_at of the first row (RFC 3339)")
	fs.DurationVar(&cfg.Window, "window", cfg.Window, "observed_at spreads over this span")
	fs.DurationVar(&cfg.Jitter, "jitter", cfg.Jitter, "observed_at moves by up to ± this")
	fs.StringVar(&cfg.RunID, "run-id", "", `run_id column (default "obsgen-SEED")`)
	out := fs.String("o", "", "Parquet file to write")
	style := fs.String("style", "native", "Parquet layout: native (infohash's) or duckdb (BLOB hash, µs timestamps)")
	text := fs.String("text", "", "also write the rows' hashes as text lines to this file")
	textFormat := fs.String("text-format", "hex", "text lines: hex, magnet or mixed")
	truthPath := fs.String("ground-truth", "", "write the ground truth as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	var err error
	if cfg.Rows, err = obsgen.ParseCount(*rows); err != nil {
		return fmt.Errorf("%w: --rows: %v", errUsage, err)
	}
	if cfg.Distinct, err = obsgen.ParseDistinct(*distinct, cfg.Rows); err != nil {
		return fmt.Errorf("%w: --distinct: %v", errUsage, err)
	}
	if cfg.Known, err = obsgen.ParseCount(*known); err != nil {
		return fmt.Errorf("%w: --known: %v", errUsage, err)
	}
	if cfg.Start, err = time.Parse(time.RFC3339, *start); err != nil {
		return fmt.Errorf("%w: --start: %v", errUsage, err)
	}
	st, ok := map[string]obsgen.Style{"native": obsgen.Native, "duckdb": obsgen.DuckDB}[*style]
	if !ok {
		return fmt.Errorf("%w: --style %q: want native or duckdb", errUsage, *style)
	}
	tf, ok := map[string]obsgen.TextFormat{"hex": obsgen.Hex, "magnet": obsgen.Magnet, "mixed": obsgen.Mixed}[*textFormat]
	if !ok {
		return fmt.Errorf("%w: --text-format %q: want hex, magnet or mixed", errUsage, *textFormat)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *out == "" && *text == "" && *truthPath == "" {
		return fmt.Errorf("%w: nothing to do: give -o FILE, --text FILE or --ground-truth FILE", errUsage)
	}

	began := time.Now()
	var truth obsgen.Truth
	if *out != "" {
		if truth, err = obsgen.WriteParquet(ctx, *out, cfg, st); err != nil {
			return err
		}
	}
	if *text != "" {
		if truth, err = obsgen.WriteText(ctx, *text, cfg, tf); err != nil {
			return err
		}
	}
	if *out == "" && *text == "" {
		if truth, err = obsgen.Count(ctx, cfg); err != nil {
			return err
		}
	}
	if *truthPath != "" {
		if err := truth.WriteJSON(*truthPath); err != nil {
			return err
		}
	}
	el := time.Since(began)
	fmt.Fprintf(stderr, "obsgen: %d rows, %d distinct (%d new), %.1fs, %.2f M rows/s\n",
		truth.Rows, truth.Distinct, truth.New, el.Seconds(), float64(truth.Rows)/el.Seconds()/1e6)
	return nil
}
