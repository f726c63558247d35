package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// proxyConfig is one row of the table: a proxy and what is added to its
// shipped configuration.
type proxyConfig struct {
	name  string // the row's name
	proxy string // nginx, caddy or haproxy
	lines string // what the row adds, in the proxy's syntax, for the report
	// write writes the configuration into dir for a proxy listening on
	// listen and forwarding to up, and returns the command line.
	write func(dir, listen, up string, lines string) ([]string, error)
}

// configs are the table's rows.
var configs = []proxyConfig{
	{name: "nginx, proxy_pass only", proxy: "nginx", write: nginxConfig},
	{name: "nginx, HTTP/1.1 upstream", proxy: "nginx", write: nginxConfig,
		lines: "proxy_http_version 1.1; proxy_set_header Connection \"\";"},
	{name: "nginx, HTTP/1.1, X-Accel-Buffering ignored", proxy: "nginx", write: nginxConfig,
		lines: "proxy_http_version 1.1; proxy_set_header Connection \"\"; proxy_ignore_headers X-Accel-Buffering;"},
	{name: "Caddy, reverse_proxy only", proxy: "caddy", write: caddyConfig},
	{name: "Caddy, encode gzip", proxy: "caddy", write: caddyConfig, lines: "encode gzip"},
	{name: "HAProxy, frontend and backend only", proxy: "haproxy", write: haproxyConfig},
	{name: "HAProxy, option http-no-delay", proxy: "haproxy", write: haproxyConfig, lines: "option http-no-delay"},
}

// shipped reads a proxy's shipped configuration file.
func shipped(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("the shipped configuration: %w (install the Debian package)", err)
	}
	return string(b), nil
}

// nginxConfig is Debian's /etc/nginx/nginx.conf with its pid and log files
// moved into dir and the sites it includes replaced by one server block:
// listen, proxy_pass to up, and lines.
func nginxConfig(dir, listen, up, lines string) ([]string, error) {
	conf, err := shipped("/etc/nginx/nginx.conf")
	if err != nil {
		return nil, err
	}
	site := fmt.Sprintf("server {\n\tlisten %s;\n\tlocation / {\n\t\tproxy_pass http://%s;\n\t\t%s\n\t}\n}\n", listen, up, lines)
	sitePath := filepath.Join(dir, "site.conf")
	if err := os.WriteFile(sitePath, []byte(site), 0o644); err != nil {
		return nil, err
	}
	for _, r := range []struct{ re, with string }{
		{`(?m)^\s*pid\s+[^;]+;`, "pid " + filepath.Join(dir, "nginx.pid") + ";"},
		{`(?m)^(\s*)(access_log|error_log)\s+[^;]+;`, "${1}${2} " + filepath.Join(dir, "${2}") + ";"},
		{`(?m)^\s*include\s+/etc/nginx/sites-enabled/\*;`, "include " + sitePath + ";"},
	} {
		conf = regexp.MustCompile(r.re).ReplaceAllString(conf, r.with)
	}
	if os.Geteuid() != 0 {
		conf = regexp.MustCompile(`(?m)^\s*user\s+[^;]+;`).ReplaceAllString(conf, "")
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return []string{"nginx", "-e", filepath.Join(dir, "error_log"), "-c", path, "-g", "daemon off;"}, nil
}

// caddyConfig is a Caddyfile of one site in place of Debian's file server
// (/etc/caddy/Caddyfile): http://listen, reverse_proxy to up, and lines;
// its admin endpoint off, so that nothing else listens.
func caddyConfig(dir, listen, up, lines string) ([]string, error) {
	conf := fmt.Sprintf("{\n\tadmin off\n}\n\nhttp://%s {\n\t%s\n\treverse_proxy %s\n}\n", listen, lines, up)
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return []string{"caddy", "run", "--adapter", "caddyfile", "--config", path}, nil
}

// haproxyConfig is Debian's /etc/haproxy/haproxy.cfg without daemon and
// its stats socket (the process stays in the foreground, and writes
// nothing under /run), plus a frontend on listen and a backend to up with
// lines.
func haproxyConfig(dir, listen, up, lines string) ([]string, error) {
	conf, err := shipped("/etc/haproxy/haproxy.cfg")
	if err != nil {
		return nil, err
	}
	conf = regexp.MustCompile(`(?m)^\s*(daemon|stats socket .*|stats timeout .*)$`).ReplaceAllString(conf, "")
	if os.Geteuid() != 0 {
		conf = regexp.MustCompile(`(?m)^\s*(chroot|user|group) .*$`).ReplaceAllString(conf, "")
	}
	conf += fmt.Sprintf("\nfrontend fe\n\tbind %s\n\tdefault_backend be\n\nbackend be\n\t%s\n\tserver up %s\n", listen, lines, up)
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	return []string{"haproxy", "-db", "-f", path}, nil
}

// running is a proxy process started for one row.
type running struct {
	cmd    *exec.Cmd
	output bytes.Buffer
	addr   string
	done   chan struct{}
}

// startProxy writes c's configuration into a directory of its own, starts
// the proxy in a process group of its own on a free loopback port, and
// waits until that port accepts connections.
func startProxy(ctx context.Context, c proxyConfig, up string) (*running, error) {
	dir, err := os.MkdirTemp("", "proxyfigures-")
	if err != nil {
		return nil, err
	}
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	argv, err := c.write(dir, addr, up, c.lines)
	if err != nil {
		return nil, err
	}
	r := &running{addr: addr, done: make(chan struct{})}
	r.cmd = exec.Command(argv[0], argv[1:]...)
	r.cmd.Dir = dir
	r.cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	r.cmd.Stdout, r.cmd.Stderr = &r.output, &r.output
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", argv[0], err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.done)
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-r.done:
			return nil, fmt.Errorf("%s exited: %s", argv[0], strings.TrimSpace(r.output.String()))
		default:
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return r, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.stop()
			return nil, fmt.Errorf("%s: nothing listens on %s after 10s: %s", argv[0], addr, r.output.String())
		}
	}
}

// stop kills the proxy's process group and waits for the proxy.
func (r *running) stop() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.done
	_ = os.RemoveAll(r.cmd.Dir)
}

// freePort returns a loopback address no one listens on now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// version returns what the proxy says of its version, one line.
func version(proxy string) string {
	var args []string
	switch proxy {
	case "nginx":
		args = []string{"nginx", "-v"}
	case "caddy":
		args = []string{"caddy", "version"}
	default:
		args = []string{"haproxy", "-v"}
	}
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return proxy + ": " + err.Error()
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}
