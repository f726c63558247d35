package pgstore

import (
	"net"
	"strconv"
)

func splitHostPort(addr string) (string, uint16, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.ParseUint(p, 10, 16)
	return host, uint16(n), err
}

func itoa(n int) string { return strconv.Itoa(n) }
