//go:build !unix

package pgstore

// workerEnv is never set off unix: TestKill9 needs SIGKILL.
const workerEnv = "PGSTORE_WORKER"

func workerMain() int { return 2 }

// abortRoleEnv is never set off unix: TestCrossInstanceCancel needs SIGKILL.
const abortRoleEnv = "PGSTORE_ABORT_ROLE"

func abortMain() int { return 2 }
