package state

import (
	"errors"
	"io"
)

// The decompressed state is produced by an inflater goroutine in blocks
// that the JSON scanner consumes and hands back. Running the two
// concurrently makes a read cost about as much as gunzip alone; recycling a
// few blocks keeps the memory of a read independent of the state's size.

const (
	// blockSize is how much decompressed state the inflater hands over at
	// once: large enough that handing over is rare, small enough that the
	// scanner rarely waits and the blocks stay in the CPU cache.
	blockSize = 256 << 10
	// blocks is how many blocks are in flight between the two sides.
	blocks = 4
)

var errTooLarge = errors.New("decompressed state too large")

// block is the next piece of the decompressed stream.
type block struct {
	data []byte
	err  error // a read error, or errTooLarge; the inflater has stopped
	done bool  // data is the last piece; the inflater has stopped
}

type inflater struct {
	size      int // blockSize, smaller in tests
	allocated int
	full      chan block
	free      chan []byte
	quit      chan struct{}
	exited    chan struct{}
}

// startInflate reads r to its end in a goroutine, size bytes at a time.
func startInflate(r io.Reader, size int) *inflater {
	in := &inflater{
		size:   size,
		full:   make(chan block, blocks),
		free:   make(chan []byte, blocks),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	go in.run(r)
	return in
}

func (in *inflater) run(r io.Reader) {
	defer close(in.exited)
	total := 0
	for {
		buf, ok := in.buffer()
		if !ok {
			return
		}
		n, err := fill(r, buf)
		total += n
		switch {
		case total > MaxStateBytes:
			in.send(block{err: errTooLarge})
			return
		case errors.Is(err, io.EOF):
			in.send(block{data: buf[:n], done: true})
			return
		case err != nil:
			in.send(block{err: err})
			return
		case !in.send(block{data: buf}):
			return
		}
	}
}

// buffer returns a free block, allocating up to blocks of them.
func (in *inflater) buffer() ([]byte, bool) {
	select {
	case buf := <-in.free:
		return buf, true
	default:
	}
	if in.allocated < blocks {
		in.allocated++
		return make([]byte, in.size), true
	}
	select {
	case buf := <-in.free:
		return buf, true
	case <-in.quit:
		return nil, false
	}
}

// fill reads until buf is full or r fails; io.EOF means r ended.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (in *inflater) send(b block) bool {
	select {
	case in.full <- b:
		return true
	case <-in.quit:
		return false
	}
}

// next waits for the next block. It must not be called again after a block
// that is done or carries an error.
func (in *inflater) next() block { return <-in.full }

// recycle hands a consumed block back.
func (in *inflater) recycle(buf []byte) {
	select {
	case in.free <- buf[:cap(buf)]:
	default: // only the final, partial block can find the pool full
	}
}

// stop ends the inflater early, if it still runs, and waits for it, so that
// no goroutine outlives a read.
func (in *inflater) stop() {
	close(in.quit)
	<-in.exited
}
