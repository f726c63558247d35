// Package golden gives every test package of the module one -update flag,
// so that `go test ./... -update` rewrites every golden file of the module
// in one command, the only way goldens are regenerated.
//
// A test package with golden files calls [Update] or [Check]. A test package
// without any imports this package for its flag only:
//
//	import _ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts -update
//
// Without that, `go test ./... -update` would stop in that package with
// "flag provided but not defined". The package is for tests only.
package golden

import (
	"flag"
	"os"
	"testing"
)

// update is the -update flag. It is registered once, when the first test
// package that imports this package starts.
var update = flag.Bool("update", false, "rewrite the golden files of the packages under test")

// Update reports whether the test binary runs with -update.
func Update() bool { return *update }

// Check compares got with the golden file at path and fails t when they
// differ; with -update it first rewrites the file with got (mode 0644).
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden: rewriting %s: %v", path, err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (run go test ./... -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("golden: %s differs from the output (run go test ./... -update after an intentional change)\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
