package golden

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()                        {}
func (r *recorder) Errorf(string, ...any)          { r.failed = true }
func (r *recorder) Fatalf(format string, a ...any) { r.failed = true }

func TestCheck(t *testing.T) {
	saved := *update
	defer func() { *update = saved }()
	*update = false
	path := filepath.Join(t.TempDir(), "out.golden")
	if err := os.WriteFile(path, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Check(r, path, []byte("same\n"))
	if r.failed {
		t.Fatal("equal output reported as different")
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("other\n"))
	if !r.failed {
		t.Fatal("different output not reported")
	}

	*update = true
	r = &recorder{TB: t}
	Check(r, path, []byte("other\n"))
	if r.failed {
		t.Fatal("-update did not rewrite the golden file")
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "other\n" {
		t.Fatalf("golden file after -update = %q, %v", got, err)
	}
	if !Update() {
		t.Fatal("Update() does not report the flag")
	}
}

// TestEveryTestPackageAcceptsUpdate keeps `go test ./... -update` working:
// every package of the module with test files must import this package
// (for its flag), or that one test binary stops the whole command with
// "flag provided but not defined: -update".
func TestEveryTestPackageAcceptsUpdate(t *testing.T) {
	const self = "github.com/Papercusp/chat-protocol-go/internal/testkit/golden"
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}}|{{len .TestGoFiles}}|{{len .XTestGoFiles}}|{{join .TestImports " "}} {{join .XTestImports " "}}`,
		"github.com/Papercusp/chat-protocol-go/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 4)
		if len(parts) != 4 || parts[0] == self || (parts[1] == "0" && parts[2] == "0") {
			continue
		}
		if !slices.Contains(strings.Fields(parts[3]), self) {
			t.Errorf("%s has tests but does not import %s (add a blank import to one test file)", parts[0], self)
		}
	}
}
