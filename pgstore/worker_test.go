package pgstore

// workerEnv, when set in the environment of this test binary, makes it run
// as a worker process of TestKill9 instead of running tests.
const workerEnv = "PGSTORE_WORKER"

func workerMain() int { return 2 }
