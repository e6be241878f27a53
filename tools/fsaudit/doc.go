// Package fsaudit checks, on an strace(1) trace of one dataset-writing
// step, that a power cut at any instant leaves a dataset whose last
// durable commit is whole: that every commit makes its bytes durable
// before it publishes them. A kill -9 cannot show a missing fsync (the
// page cache outlives the process); the trace can, replayed through a
// model of what reaches the disk.
//
// The model is conservative and POSIX-like:
//
//   - A file's data is durable once an fsync or fdatasync of it, or a
//     syncfs of its file system (or a sync), starts after its last write
//     ended. O_DIRECT writes are no exception: they still need the sync,
//     for the allocation metadata and the disk's cache. Writes are write,
//     pwrite64, writev, pwritev(2), ftruncate, truncate, fallocate, an
//     open with O_TRUNC, and copy_file_range, sendfile or splice into the
//     file; sync_file_range makes nothing durable.
//   - A directory entry (an open that creates, mkdir, rename, link,
//     symlink, unlink, rmdir) is durable once an fsync of that directory,
//     or a syncfs (sync), starts after the call ended. A rename across
//     directories changes two entries, each durable with its own folder.
//   - After a power cut only durable data and entries remain.
//   - But a rename may also reach the disk before any sync of its folder
//     (a journal commits on its own): so what a rename onto CURRENT
//     publishes, or a rename of an output into place, must be durable
//     before the rename, whatever syncs follow it.
//
// What is checked, each violation reported once, at its first instant
// (trace line), with the call, the file, and what is not durable and why:
//
//   - after every sync (the only calls that change what a power cut
//     leaves) and at the exit: the durable CURRENT, if any, is durable
//     data naming a manifest that is durably present with durable data,
//     and every file that manifest lists (each table's data files and
//     Bloom filters) is durably present with durable data;
//   - at a rename (or link) onto a CURRENT: the same of the commit it
//     publishes, taking that rename as durable;
//   - at a write to a file the durable CURRENT's commit holds, and at an
//     unlink or rename that removes one (or an entry on its path);
//   - at a rename onto an output (Config.Outputs): its data is durable;
//   - at the exit, when the status says the work is committed (0, 3
//     partial, 130 interrupted): the last rename onto each CURRENT, and
//     of each output, is durable; an output written in place (stdout
//     redirected to it) has durable data.
//   - at a rename onto a cache (Config.Caches: a DHT state file, whose
//     loss only makes the next run start cold): its data is durable, and
//     so is its folder's entry (a new --dht-state folder's parent is
//     synced); a write to it in place is reported; the exit does not
//     check it;
//   - at an unlink of a spool in a dataset's inbox/ (stdin as dedup and
//     merge keep it), or its rename out of inbox/: a commit after the
//     spool got its name is durable (see keep.go);
//   - at the exit, whatever the status: every file left in a dataset's
//     inbox/ (a stopped run's spool, kept for the next run) is durably
//     there, under some name, with durable data.
//
// Trace with
//
//	strace -f -y -tt -s 1048576 -e signal=none -o TRACE -e trace=$(fsaudit -calls) CMD...
//
// (TraceCalls, which fsaudit -calls prints)
// -s must hold a whole manifest: the content of CURRENT and of the
// manifests comes from the write calls; a commit whose content was cut
// is reported as unchecked. Paths come from -y; an *at() path is
// resolved against its dirfd or the working directory; a descriptor -y
// (or -yy) shows as no path (a socket, a pipe) is no file. Calls that
// failed change nothing. A call changes the tree at its end, or sooner
// if another thread's call shows it had (inflight.go: a file made in a
// folder whose mkdir's line is still "<unfinished ...>"). The state
// before the trace is durable (sync first): Config.Before gives the tree
// and content of a dataset as it was; elsewhere an unknown path is taken
// for a durable file of unknown content. A file opened O_TMPFILE has no
// name until a linkat of /proc/self/fd/N (or AT_EMPTY_PATH) gives it
// one. Memory-mapped writes and io_uring are not seen.
package fsaudit

// TraceCalls are the system calls an audit needs traced (strace -e
// trace=): what changes files, entries, descriptors or the working
// directory, what syncs, and the exit.
const TraceCalls = "open,openat,creat,write,pwrite64,writev,pwritev,pwritev2,ftruncate,truncate,fallocate," +
	"copy_file_range,sendfile,splice,lseek,fsync,fdatasync,syncfs,sync,rename,renameat,renameat2,link,linkat," +
	"symlink,symlinkat,unlink,unlinkat,mkdir,mkdirat,rmdir,close,dup,dup2,dup3,fcntl,chdir,fchdir,exit_group"
