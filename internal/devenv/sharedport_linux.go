package devenv

import (
	"context"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// listenShared listens on addr with SO_REUSEPORT, so that every `captf-dev
// manager` of an environment listens on its webhook address at once: the
// kernel hands each new connection to one of them, and to the others only
// once one is gone (killed, even with SIGKILL), as a Service does with the
// replicas of a Deployment.
func listenShared(addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(context.Background(), "tcp", addr)
}
