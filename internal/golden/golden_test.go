package golden

import (
	"os"
	"path/filepath"
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
