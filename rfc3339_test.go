package chatprotocol

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRFC3339(t *testing.T) {
	accept := map[string]time.Time{
		"2025-11-30T10:00:00Z":                   time.Date(2025, 11, 30, 10, 0, 0, 0, time.UTC),
		"2025-11-30t10:00:00z":                   time.Date(2025, 11, 30, 10, 0, 0, 0, time.UTC),
		"2025-11-30T10:00:00.5+01:00":            time.Date(2025, 11, 30, 9, 0, 0, 500_000_000, time.UTC),
		"2025-11-30T10:00:00.123456789123-00:30": time.Date(2025, 11, 30, 10, 30, 0, 123_456_789, time.UTC),
		"2024-02-29T00:00:00Z":                   time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		"2000-02-29T00:00:00Z":                   time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC),
		"0000-01-01T00:00:00Z":                   time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		"2025-11-30T10:00:00+23:59":              time.Date(2025, 11, 29, 10, 1, 0, 0, time.UTC),
		// Leap seconds: the last second of a UTC day, whatever the offset.
		"2016-12-31T23:59:60Z":         time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC),
		"2016-12-31T15:59:60.25-08:00": time.Date(2017, 1, 1, 0, 0, 0, 250_000_000, time.UTC),
	}
	for in, want := range accept {
		got, ok := parseRFC3339(in)
		require.True(t, ok, in)
		assert.True(t, want.Equal(got), "%s: %v, want %v", in, got, want)
	}
	for _, in := range []string{
		"", "2025-11-30", "2025-11-30T10:00:00", "2025-11-30 10:00:00Z", "2025-11-30T10:00Z",
		"2025-11-30T10:00:00,5Z", "2025-11-30T10:00:00.Z", "2025-11-30T10:00:00.5", "2025-11-30T10:00:00ZZ",
		"2025-11-30T10:00:00+24:00", "2025-11-30T10:00:00+01:60", "2025-11-30T10:00:00+0100", "2025-11-30T10:00:00+01",
		"2025-13-01T00:00:00Z", "2025-00-01T00:00:00Z", "2025-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2025-04-31T00:00:00Z",
		"2025-11-00T00:00:00Z", "2025-11-30T24:00:00Z", "2025-11-30T23:60:00Z", "2025-11-30T23:59:61Z",
		"2016-12-31T23:58:60Z", "2016-12-31T22:59:60Z", "2016-12-31T23:59:60+01:00",
		"+2025-11-30T10:00:00Z", "2025-1-30T10:00:00Z", "２025-11-30T10:00:00Z", "2025-11-30T1０:00:00Z",
		"2025-11-30T10:00:00.\u0665Z", "2025-11-30T10:00:00Z\n",
	} {
		_, ok := parseRFC3339(in)
		assert.False(t, ok, "%q", in)
	}
}

// rfc3339Shape is the shape of an RFC 3339 date-time with an uppercase T
// and Z, where time.Parse and the grammar agree once the values are in
// range.
var rfc3339Shape = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-]([0-9]{2}):([0-9]{2}))$`)

// FuzzParseRFC3339 checks parseRFC3339 against time.Parse: an accepted
// timestamp names the instant time.Parse gives for it (once its t and z are
// uppercased and a leap second is read as the next second); and on the
// shape where the two agree (rfc3339Shape, offset within 23:59, no leap
// second) both accept or both refuse. time.Parse alone also accepts
// one-digit fields, a comma before the fraction and offsets up to 99:99.
func FuzzParseRFC3339(f *testing.F) {
	for _, s := range []string{"2025-11-30T10:00:00Z", "2025-11-30T10:00:00.5+01:00", "2016-12-31T23:59:60Z", "2025-11-30t10:00:00z",
		"2025-11-30T10:00:00,5Z", "2025-11-30T10:00:00+24:00", "2024-02-29T00:00:00-23:59", "2016-12-31T15:59:60.25-08:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseRFC3339(s)
		if ok {
			norm := []byte(s)
			norm[10] = 'T'
			if norm[len(norm)-1] == 'z' {
				norm[len(norm)-1] = 'Z'
			}
			leap := string(norm[17:19]) == "60"
			if leap {
				norm[17], norm[18] = '5', '9'
			}
			want, err := time.Parse(time.RFC3339Nano, string(norm))
			require.NoError(t, err, "parseRFC3339 accepted %q", s)
			if leap {
				want = want.Add(time.Second)
			}
			if !want.Equal(got) {
				t.Fatalf("parseRFC3339(%q) = %v, time.Parse = %v", s, got, want)
			}
		}
		m := rfc3339Shape.FindStringSubmatch(s)
		if m == nil || s[17:19] == "60" || m[3] >= "24" || m[4] >= "60" {
			return
		}
		if _, err := time.Parse(time.RFC3339Nano, s); (err == nil) != ok {
			t.Fatalf("parseRFC3339(%q) = %v, time.Parse: %v", s, ok, err)
		}
	})
}
