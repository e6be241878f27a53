package dataset

import "os"

// Staged is what writers keep under DIR/staging, as a reader sees it.
type Staged struct {
	// Paths are the writers' folders under DIR/staging.
	Paths []string
	// Bytes are what they alone hold (a file hard-linked elsewhere, into
	// a snapshot, counts for nothing).
	Bytes int64
}

// Staged lists the folders under DIR/staging, for a reader that takes no
// lock (status): each is the private folder of a writer running now, or
// what a writer that was killed left (a killed dedup's staged partitions
// can hold hundreds of MB). A reader cannot tell the two apart without
// taking a lock; the next writer to open the dataset removes the folders
// of dead writers (cleanStaging).
func (d *Dataset) Staged() Staged {
	var s Staged
	ents, _ := os.ReadDir(d.Path("staging"))
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := d.Path("staging", e.Name())
		s.Paths = append(s.Paths, p)
		s.Bytes += ownBytes(p)
	}
	return s
}
