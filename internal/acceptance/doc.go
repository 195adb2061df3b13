// Package acceptance holds the end-to-end suites that run causalctl's
// whole command tree in-process (cli.Run) against in-process kfake
// clusters, the demo and capture files: the fault and changing-cluster
// tables, the JSON schemas, completion, secrets, reliability and the real
// Prometheus scrapes. No command owns them; each command's own tests stay
// in its package, and the tests of cli.Run itself beside it. It has no
// code but this comment.
package acceptance
