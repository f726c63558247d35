//go:build !unix

package pgstore

// workerEnv is never set off unix: TestKill9 needs SIGKILL.
const workerEnv = "PGSTORE_WORKER"

func workerMain() int { return 2 }
