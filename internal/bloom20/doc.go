// Package bloom20 adds and tests 20-byte keys (infohashes) in a
// bits-and-blooms/bloom v3 filter at exactly the bit locations the
// library uses, faster than its Add and Test: the key's MurmurHash3
// x64-128 (of the key, and of the key followed by a 0x01 byte, as the
// library's sum256 makes its four base hashes) is computed for a 20-byte
// input only, without the generic digest; a location's 64-bit remainder
// modulo m is computed by multiplication (Mod) instead of a division; and
// the bits are set and tested in the filter's words directly.
//
// A filter changed through this package stays the library's: its Test,
// TestLocations and WriteTo answer and write what they would had the
// keys been added with its Add.
package bloom20
