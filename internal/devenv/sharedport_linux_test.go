package devenv

import (
	"io"
	"net"
	"testing"

	"github.com/go-logr/logr"
)

// Two managers listen on the same webhook address, each forwarding to its
// own server; once one is gone, every connection reaches the other.
func TestSharedAddressOutlivesAManager(t *testing.T) {
	backend := func(name string) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_, _ = io.WriteString(c, name)
				_ = c.Close()
			}
		}()
		return l.Addr().String()
	}
	first, err := listenShared("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := first.Addr().String()
	second, err := listenShared(addr)
	if err != nil {
		t.Fatalf("a second manager cannot listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = second.Close() })
	go forward(first, backend("first"), logr.Discard())
	go forward(second, backend("second"), logr.Discard())

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(c)
		_ = c.Close()
		if err != nil || string(got) != "second" {
			t.Fatalf("a connection after the first manager left got %q, %v; want the second's", got, err)
		}
	}
}
