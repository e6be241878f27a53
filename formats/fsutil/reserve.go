package fsutil

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// Reserve makes sure the first total bytes of a temporary file have disk
// space (fallocate(2), mode 0), ahead of the writes that will fill them,
// so that a full disk fails here, with a Reserve error that IsNoSpace
// recognises, rather than at a write that leaves half a row group behind.
// The file's size grows with the reservation; Commit cuts it back to what
// was written (the write offset), so the bytes published are the same as
// without it. A smaller total than before, a file written in place, or a
// filesystem without fallocate (EOPNOTSUPP, from then on) is a no-op.
func (f *File) Reserve(total int64) error {
	if f.direct || f.noAlloc || total <= f.reserved {
		return nil
	}
	var err error
	for {
		err = unix.Fallocate(int(f.File.Fd()), 0, 0, total)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		f.reserved = total
		return nil
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS):
		f.noAlloc = true
		return nil
	}
	return fmt.Errorf("%s: reserving %d bytes: %w", f.final, total, err)
}

// Reserved is the total Reserve obtained (0: none, or no fallocate).
func (f *File) Reserved() int64 { return f.reserved }

// IsNoSpace reports whether err is a full disk, a full quota or a file
// size limit (ENOSPC, EDQUOT, EFBIG): no more room, as opposed to a
// failing disk.
func IsNoSpace(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) || errors.Is(err, unix.EFBIG)
}

// trimReserved cuts a reserved file back to its write offset, which is
// where its writers (sequential, through Write) stopped.
func (f *File) trimReserved() error {
	if f.reserved == 0 {
		return nil
	}
	end, err := f.File.Seek(0, io.SeekCurrent)
	if err == nil {
		err = f.File.Truncate(end)
	}
	if err != nil {
		return fmt.Errorf("%s: trimming the reserved space: %w", f.final, err)
	}
	return nil
}
