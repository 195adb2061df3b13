// Package parsley reads Parsley's ordering state (SPEC §6): the keys and
// values of the key-value store in which a Parsley process keeps its
// delivery gate, and the store rebuilt from its changelog, one task per
// changelog partition.
//
// The package is pure: it decodes bytes handed to it and rebuilds the store
// from entries in changelog order. Reading the changelog topic is the
// business of internal/kafka and internal/capture. Corrupt bytes are refused
// with the partition, offset and key named; nothing is guessed past them.
//
// The encoders exist for the demo, which writes a changelog as a real
// process would, and for tests; causalctl never writes a real process's
// state.
package parsley
