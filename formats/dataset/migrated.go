package dataset

import "errors"

// A Migrated is the commit Open made itself when it migrated an older
// format (the one commit a writer makes before reading its inputs): it
// stays committed whatever the run does next, so that a run that then
// fails or is interrupted has committed that much, if none of its input.
type Migrated struct {
	Dir      string // the dataset, as the run named it
	From     int    // the format it was migrated from (to FormatVersion)
	Snapshot int64  // the snapshot the migration committed
	// Identified is set when the migrated dataset was a copy (Copied),
	// which the migration's commit gave its own dataset id.
	Identified bool
}

// Migration is the migration Open committed on d, nil if it made none
// (the dataset was of the current format, or another writer migrated it
// first).
func (d *Dataset) Migration() *Migrated { return d.migrated }

// A MigratedError is a writer's error (Err, unchanged: same text, same
// exit status) after Open migrated its dataset: it carries that
// migration (Migrated), so that the message of a run that stops before
// its own commit can say what it committed (MigrationOf).
type MigratedError struct {
	Err error
	Migrated
}

func (e *MigratedError) Error() string { return e.Err.Error() }
func (e *MigratedError) Unwrap() error { return e.Err }

// KeptMigration is err carrying the migration Open committed on d
// (MigratedError), or err unchanged: nil, or a d that made none. A
// writer returns its errors through it once it has opened d.
func (d *Dataset) KeptMigration(err error) error {
	if err == nil || d == nil || d.migrated == nil {
		return err
	}
	if _, ok := MigrationOf(err); ok {
		return err
	}
	return &MigratedError{Err: err, Migrated: *d.migrated}
}

// MigrationOf is the migration err says the run committed on open
// (KeptMigration); false if it says none.
func MigrationOf(err error) (*Migrated, bool) {
	var e *MigratedError
	if errors.As(err, &e) {
		return &e.Migrated, true
	}
	return nil, false
}
