package conformance

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Failure is one failing case: its name (a path relative to the
// directory, or "manifest") and why it failed.
type Failure struct {
	Case   string
	Reason string
}

// Report is the outcome of Run.
type Report struct {
	Passed   int
	Failures []Failure
}

// Failed is the number of failing cases.
func (r Report) Failed() int { return len(r.Failures) }

// WriteTo writes one line per failure, "FAIL case: reason", then the line
// "N passed, N failed".
func (r Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "FAIL %s: %s\n", f.Case, strings.ReplaceAll(f.Reason, "\n", "\n\t"))
	}
	fmt.Fprintf(&b, "%d passed, %d failed\n", r.Passed, r.Failed())
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func (r *Report) add(name string, err error) {
	if err != nil {
		r.Failures = append(r.Failures, Failure{Case: name, Reason: err.Error()})
		return
	}
	r.Passed++
}

// Run checks the conformance directory dir: the manifest against the files
// (one failure per drifting, missing or unlisted file; the manifest counts
// as one passing case when nothing drifts), every fixture and every legacy
// case against its expectation, every golden state against its stream,
// every provider body against its expected envelopes (providers/, with
// their state against them), and every line of the blocks parity file
// (one case per line) against the
// reference's answer. Schemas and docs are checked only through the
// manifest; schemas are validated by the module's tests, which may depend
// on a JSON Schema validator. The error is non-nil
// only when dir cannot be read at all.
func Run(dir string) (Report, error) {
	var r Report
	built, err := BuildManifest(dir)
	if err != nil {
		return r, err
	}
	onDisk, err := ReadManifest(dir)
	if err != nil {
		r.add("manifest", fmt.Errorf("cannot read %s: %w", ManifestFile, err))
	} else if drift := diffManifest(onDisk, built); len(drift) > 0 {
		for _, d := range drift {
			r.add("manifest", fmt.Errorf("%s", d))
		}
	} else {
		r.add("manifest", nil)
	}
	streams := map[string]bool{}
	for _, e := range built.Files {
		if e.Role == RoleGoldenStream || e.Role == RoleProviderStream {
			streams[e.Path] = false
		}
	}
	for _, e := range built.Files {
		full := filepath.Join(dir, filepath.FromSlash(e.Path))
		switch e.Role {
		case RoleFixture:
			data, err := os.ReadFile(full)
			if err == nil {
				err = runFixture(data)
			}
			r.add(e.Path, err)
		case RoleLegacy:
			data, err := os.ReadFile(full)
			if err == nil {
				err = runLegacy(data)
			}
			r.add(e.Path, err)
		case RoleBlocksParity:
			data, err := os.ReadFile(full)
			if err != nil {
				r.add(e.Path, err)
			} else {
				runParity(&r, e.Path, data)
			}
		case RoleProviderBody:
			data, err := os.ReadFile(full)
			if err == nil {
				err = runProviderBody(dir, e.Path, data)
			}
			r.add(e.Path, err)
		case RoleGoldenState, RoleProviderState:
			data, err := os.ReadFile(full)
			if err == nil {
				err = runGolden(dir, e.Path, data)
			}
			if _, ok := streams[streamOf(e.Path)]; ok {
				streams[streamOf(e.Path)] = true
			} else if err == nil {
				err = fmt.Errorf("no stream %s", streamOf(e.Path))
			}
			r.add(e.Path, err)
		}
	}
	for _, e := range built.Files {
		if (e.Role == RoleGoldenStream || e.Role == RoleProviderStream) && !streams[e.Path] {
			r.add(e.Path, fmt.Errorf("no golden state; run go test ./... -update"))
		}
	}
	return r, nil
}

// Update regenerates what the conformance directory derives from its
// sources: the golden state of every golden stream, the expected envelopes
// and state of every provider body, then the manifest. Fixtures, golden
// streams and provider bodies are never rewritten.
func Update(dir string) error {
	m, err := BuildManifest(dir)
	if err != nil {
		return err
	}
	for _, e := range m.Files {
		switch e.Role {
		case RoleGoldenStream:
			err = writeGolden(dir, e.Path)
		case RoleProviderBody:
			err = writeProvider(dir, e.Path)
		}
		if err != nil {
			return err
		}
	}
	if m, err = BuildManifest(dir); err != nil {
		return err
	}
	out, err := MarshalManifest(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), out, 0o644)
}
