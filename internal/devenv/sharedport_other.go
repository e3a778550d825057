//go:build !linux

package devenv

import "net"

// listenShared listens on addr. Outside Linux the address is not shared:
// only one `captf-dev manager` of an environment serves its webhooks.
func listenShared(addr string) (net.Listener, error) {
	return net.Listen("tcp", addr)
}
