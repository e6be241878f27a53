package rowio

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// SetMetadata records key = value in the output's metadata: the Parquet
// file's key-value metadata, or the Arrow stream's schema metadata. An
// Arrow stream starts with its schema, so there it must be called before
// the first Write.
func (w *Writer[T]) SetMetadata(key, value string) error {
	if w.pw != nil {
		w.pw.SetKeyValueMetadata(key, value)
		return nil
	}
	if w.n > 0 {
		return fmt.Errorf("%s: metadata %q set after the first rows", w.name, key)
	}
	if w.meta == nil {
		w.meta = map[string]string{}
	}
	w.meta[key] = value
	md := arrow.MetadataFrom(w.meta)
	// The IPC writer sends the schema with the first record (or at
	// Close): until then it can be replaced by one with the metadata.
	w.aw = ipc.NewWriter(w.bw, ipc.WithSchema(arrow.NewSchema(w.pl.schema.Fields(), &md)))
	return nil
}

// Metadata returns the value of key in the input's metadata (Parquet
// key-value metadata, or the Arrow stream's schema metadata).
func (r *Reader[T]) Metadata(key string) (string, bool) {
	if r.pf != nil {
		return r.pf.Lookup(key)
	}
	if r.ar == nil {
		return "", false
	}
	md := r.ar.Schema().Metadata()
	if i := md.FindKey(key); i >= 0 {
		return md.Values()[i], true
	}
	return "", false
}
