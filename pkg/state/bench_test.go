package state

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Benchmarks report their figure against a baseline measured in the same
// run, as a ratio, so that a slow or busy machine does not change the
// verdict:
//
//   - x-vs-gzip: gunzip alone into io.Discard divided by the time of the
//     measured read, as a throughput ratio; the target is >= 0.9.
//   - peak-heap-vs-json, alloc-vs-json: heap growth during a read, and bytes
//     allocated by it, over the size of the decompressed state; the target
//     is <= 1.5 (a streaming read stays far below it).

type benchFixture struct {
	json    []byte
	gz      []byte
	secrets []corev1.Secret
}

var (
	fixtureOnce sync.Once
	fixture     benchFixture
)

// bench32Chunks is a realistic state just under MaxStateBytes, cut into
// MaxChunks pieces. At a realistic compression ratio 32 pieces of a full
// 1 MiB would decompress far past the limit, so the pieces are smaller; the
// reader does not care about their size.
func bench32Chunks(b *testing.B) benchFixture {
	fixtureOnce.Do(func() {
		js, _ := genState(b, genOptions{size: 60 << 20, privateBytes: 48})
		if len(js) > MaxStateBytes {
			b.Fatalf("fixture is %d bytes, over MaxStateBytes", len(js))
		}
		gz := gzipBytes(b, js, gzip.DefaultCompression)
		pieces := cut(gz, (len(gz)+MaxChunks-1)/MaxChunks)
		fixture = benchFixture{json: js, gz: gz, secrets: secretsFor(pieces...)}
		b.Logf("fixture: %d MiB of JSON, %.1fx compression, %d chunks", len(js)>>20,
			float64(len(js))/float64(len(gz)), len(pieces))
	})
	if len(fixture.secrets) != MaxChunks {
		b.Fatalf("fixture has %d chunks, want %d", len(fixture.secrets), MaxChunks)
	}
	return fixture
}

func gunzipToDiscard(b *testing.B, gz []byte) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		b.Fatal(err)
	}
}

// benchAgainstGzip times read in every iteration and, with the timer
// stopped, the gunzip baseline, and reports their ratio.
func benchAgainstGzip(b *testing.B, read func()) {
	fx := bench32Chunks(b)
	b.SetBytes(int64(len(fx.json)))
	var baseline, measured time.Duration
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		gunzipToDiscard(b, fx.gz)
		baseline += time.Since(start)
		b.StartTimer()
		start = time.Now()
		read()
		measured += time.Since(start)
	}
	b.ReportMetric(float64(baseline)/float64(measured), "x-vs-gzip")
}

// BenchmarkDecode32Chunks measures Decode of a 32-chunk state.
func BenchmarkDecode32Chunks(b *testing.B) {
	fx := bench32Chunks(b)
	benchAgainstGzip(b, func() {
		if _, err := Decode(testSuffix, fx.secrets); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkScan32Chunks measures the JSON scan alone, over the already
// decompressed state. Decode runs it concurrently with gunzip, so Decode
// keeps pace with gunzip only while this ratio stays above 1 and a second
// core is free.
func BenchmarkScan32Chunks(b *testing.B) {
	fx := bench32Chunks(b)
	benchAgainstGzip(b, func() {
		s := scanner{b: fx.json, hold: -1}
		if !s.document(&document{}) {
			b.Fatal(s.err)
		}
	})
}

// BenchmarkEncodingJSON32Chunks measures the obvious alternative, gunzip
// into a buffer and json.Unmarshal into the fields CAPTF needs, to show why
// Decode scans the JSON itself.
func BenchmarkEncodingJSON32Chunks(b *testing.B) {
	fx := bench32Chunks(b)
	benchAgainstGzip(b, func() {
		readers := make([]io.Reader, len(fx.secrets))
		for i, s := range fx.secrets {
			readers[i] = bytes.NewReader(s.Data[DataKey])
		}
		zr, err := gzip.NewReader(io.MultiReader(readers...))
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(io.LimitReader(zr, MaxStateBytes+1)); err != nil {
			b.Fatal(err)
		}
		var st struct {
			Version   int
			Serial    int64
			Lineage   string
			Outputs   map[string]struct{ Value, Type json.RawMessage }
			Resources []struct{ Mode string }
		}
		if err := json.Unmarshal(buf.Bytes(), &st); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkDecodePeakHeap measures how far the heap grows while a 32-chunk
// state is read, sampling it as the read runs.
func BenchmarkDecodePeakHeap(b *testing.B) {
	fx := bench32Chunks(b)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	var peakRatio, allocRatio float64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		base := heap()
		stop, peak := make(chan struct{}), make(chan uint64)
		go func() {
			high := base
			for {
				select {
				case <-stop:
					peak <- high
					return
				default:
					high = max(high, heap())
					time.Sleep(50 * time.Microsecond)
				}
			}
		}()
		b.StartTimer()
		st, err := Decode(testSuffix, fx.secrets)
		b.StopTimer()
		close(stop)
		high := max(<-peak, heap())
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(st)
		if err != nil {
			b.Fatal(err)
		}
		peakRatio = max(peakRatio, float64(high-base)/float64(len(fx.json)))
		allocRatio = max(allocRatio, float64(after.TotalAlloc-before.TotalAlloc)/float64(len(fx.json)))
		b.StartTimer()
	}
	b.ReportMetric(peakRatio, "peak-heap-vs-json")
	b.ReportMetric(allocRatio, "alloc-vs-json")
}
