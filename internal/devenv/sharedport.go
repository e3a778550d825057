package devenv

import (
	"errors"
	"io"
	"net"
	"time"

	"github.com/go-logr/logr"
)

// forward copies every connection accepted on ln to and from target until
// either side closes, and returns once ln is closed. It only passes bytes:
// TLS ends at the manager's webhook server behind target, with the
// certificate the API server trusts.
func forward(ln net.Listener, target string, log logr.Logger) {
	for {
		conn, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of file descriptors and the like: back off rather than
			// spin, as net/http's server does.
			log.Error(err, "Accepting a webhook connection")
			time.Sleep(100 * time.Millisecond)
			continue
		}
		go pipe(conn, target, log)
	}
}

func pipe(conn net.Conn, target string, log logr.Logger) {
	defer func() { _ = conn.Close() }()
	back, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		log.Error(err, "Forwarding a webhook connection", "to", target)
		return
	}
	defer func() { _ = back.Close() }()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(back, conn); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, back); done <- struct{}{} }()
	// One side is done: the deferred closes end the other copy.
	<-done
}
