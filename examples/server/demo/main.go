package demo

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Main is a server command's main: Run with the command's arguments on
// the stores open opens, until SIGINT or SIGTERM; a failure is printed
// and exits 1.
func Main(open Opener) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, os.Args[1:], os.Stdout, os.Stderr, open); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		stop()
		os.Exit(1)
	}
}
