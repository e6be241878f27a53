package dedup

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// colReader hands out one column chunk's values a run of rows at a time,
// so that the columns of a row group are decoded side by side in slices
// (foldSliceRows) instead of each whole (which held a row group's
// columns and records in memory at once).
type colReader struct {
	name    string
	pages   parquet.Pages
	maxDef  int
	noNulls bool  // a null is bad input (info_hash, observed_at), reported by row
	base    int64 // rows of the row group before the current page
	// prepare checks a page and returns what copies its values: fill(row,
	// v, n) puts values v..v+n-1 of the page into rows row..row+n-1 of the
	// slice being decoded. It is called only for pages with values.
	prepare func(p parquet.Page) (fill func(row, v, n int), err error)

	page     parquet.Page
	fill     func(row, v, n int)
	defs     []byte // definition levels when the page has nulls
	pos, val int    // rows and values of page handed out
	pageRows int
}

func newColReader(name string, cc parquet.ColumnChunk, maxDef int, prepare func(parquet.Page) (func(row, v, n int), error)) *colReader {
	return &colReader{name: name, pages: cc.Pages(), maxDef: maxDef, prepare: prepare}
}

// read fills rows [row, row+n) of the slice being decoded; null rows are
// left as they are.
func (c *colReader) read(row, n int) error {
	for n > 0 {
		if c.page == nil || c.pos == c.pageRows {
			if err := c.next(); err != nil {
				return err
			}
			continue
		}
		m := min(n, c.pageRows-c.pos)
		switch {
		case c.fill == nil: // all nulls
		case c.defs == nil:
			c.fill(row, c.val, m)
			c.val += m
		default:
			for i, d := range c.defs[c.pos : c.pos+m] {
				if int(d) == c.maxDef {
					c.fill(row+i, c.val, 1)
					c.val++
				}
			}
		}
		c.pos += m
		row += m
		n -= m
	}
	return nil
}

// next moves to the next page.
func (c *colReader) next() error {
	c.release()
	p, err := c.pages.ReadPage()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: fewer values than rows", c.name)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	c.base += int64(c.pageRows)
	c.page, c.pos, c.val, c.fill, c.defs = p, 0, 0, nil, nil
	c.pageRows = int(p.NumRows())
	nulls := int(p.NumNulls())
	if nulls > 0 && c.maxDef == 0 {
		return fmt.Errorf("%s: nulls in a required column", c.name)
	}
	if nulls > 0 && c.noNulls {
		row := c.base
		for _, d := range p.DefinitionLevels() {
			if int(d) != c.maxDef {
				break
			}
			row++
		}
		return &rowError{row: row, msg: c.name + " is null"}
	}
	if nulls >= int(p.NumValues()) {
		return nil
	}
	if nulls > 0 {
		c.defs = p.DefinitionLevels()
		if len(c.defs) != c.pageRows {
			return fmt.Errorf("%s: %d definition levels for %d rows", c.name, len(c.defs), c.pageRows)
		}
	}
	if c.fill, err = c.prepare(p); err != nil {
		if re, ok := err.(*rowError); ok { // a value of the page: place its row in the row group
			return &rowError{row: c.base + c.valueRow(re.row), msg: re.msg}
		}
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return nil
}

// valueRow is the row of the page's value v: its nulls have none.
func (c *colReader) valueRow(v int64) int64 {
	if c.defs == nil {
		return v
	}
	for i, d := range c.defs {
		if int(d) == c.maxDef {
			if v == 0 {
				return int64(i)
			}
			v--
		}
	}
	return v
}

// finish checks that the chunk holds no rows beyond those read, and
// releases it.
func (c *colReader) finish() error {
	defer c.close()
	if c.page != nil && c.pos != c.pageRows {
		return fmt.Errorf("%s: more values than rows", c.name)
	}
	for {
		c.release()
		p, err := c.pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		c.page = p
		if p.NumRows() > 0 {
			return fmt.Errorf("%s: more values than rows", c.name)
		}
	}
}

func (c *colReader) release() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
}

// close releases the reader's page and pages.
func (c *colReader) close() {
	c.release()
	c.pages.Close()
}

// rowError is bad input in row row (from 0) of a row group (not
// corruption); its message, and those that place it further, count rows
// from 1, as every message of the binary does.
type rowError struct {
	row int64
	msg string
}

func (e *rowError) Error() string { return fmt.Sprintf("row %d: %s", e.row+1, e.msg) }

// dictIndexes returns a dictionary page's indexes, checked to be one per
// non-null row and to point into a dictionary of n values.
func dictIndexes(p parquet.Page, n int) ([]int32, error) {
	idx := dataOf(p).Int32()
	if err := checkCount(p, len(idx)); err != nil {
		return nil, err
	}
	for _, ix := range idx {
		if uint32(ix) >= uint32(n) {
			return nil, errors.New("dictionary index out of range")
		}
	}
	return idx, nil
}

// checkCount checks that a page decoded to as many values as it has
// non-null rows.
func checkCount(p parquet.Page, got int) error {
	if want := int(p.NumValues() - p.NumNulls()); got != want {
		return fmt.Errorf("%d values for %d non-null rows", got, want)
	}
	return nil
}
