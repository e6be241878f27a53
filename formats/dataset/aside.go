package dataset

import "os"

// SetAside moves a spooled input that turned out to be bad out of the way
// of later runs (which would otherwise retry it, and fail, as a
// leftover): it is renamed with the suffix ".bad", kept for a person to
// look at or delete (status lists it), and its new path returned. An
// empty one holds nothing worth keeping: it is removed, and "" returned.
func SetAside(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.Size() == 0 {
		return "", os.Remove(path)
	}
	kept := path + ".bad"
	return kept, os.Rename(path, kept)
}
