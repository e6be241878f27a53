package dataset

// InputCacheFile is the name, in DIR, of dedup's cache of its inputs'
// content checksums (keyed by what stat(2) says of each file), which
// spares a re-run reading inputs it already applied. It is a cache, not
// data: no snapshot refers to it, and losing or damaging it costs only
// the time to read the inputs again.
const InputCacheFile = "input-cache"
