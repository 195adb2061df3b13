package capture

import "io"

// NewParallelForTest returns a ParallelReader of the size bytes of r in parts
// of partSize bytes on workers goroutines; a broken one, whose merge hands
// parts over out of order (broken 1) or leaves their line numbers
// unrebased (broken 2), when broken is not 0.
func NewParallelForTest(r io.ReaderAt, size int64, workers, partSize, broken int, opts ...ReaderOption) *ParallelReader {
	cfg := readerConfig{maxLine: DefaultMaxLineSize}
	for _, o := range opts {
		o(&cfg)
	}
	return newParallelReader(r, size, cfg, workers, partSize, mergeFault(broken))
}
