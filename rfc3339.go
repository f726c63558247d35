package chatprotocol

import "time"

// parseRFC3339 reads an RFC 3339 date-time (RFC 3339 section 5.6) exactly
// as its grammar says, and returns the instant it names:
//
//	YYYY-MM-DD "T" hh:mm:ss [ "." 1*DIGIT ] ( "Z" / ("+" / "-") hh:mm )
//
// "T" and "Z" match in either case (RFC 3339 section 5.6's note; ABNF
// strings are case-insensitive); the day exists in its month and year; hour
// 00-23, minute 00-59, second 00-59, or 60 for a leap second when the time
// in UTC is 23:59 (section 5.7; the instant returned is then the next
// second); the fraction has any number of digits (nanoseconds are kept);
// an offset's hour is 00-23 and its minute 00-59.
//
// time.Parse(time.RFC3339, …) is not used because it differs both ways: it
// accepts a comma before the fraction and offsets such as +24:00 or +01:60,
// and it refuses a lowercase t or z and leap seconds.
func parseRFC3339(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':' ||
		(s[10] != 'T' && s[10] != 't') {
		return time.Time{}, false
	}
	year, ok1 := decimal(s[0:4])
	month, ok2 := decimal(s[5:7])
	day, ok3 := decimal(s[8:10])
	hour, ok4 := decimal(s[11:13])
	minute, ok5 := decimal(s[14:16])
	second, ok6 := decimal(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || month < 1 || month > 12 || day < 1 ||
		day > daysIn(time.Month(month), year) || hour > 23 || minute > 59 || second > 60 {
		return time.Time{}, false
	}
	rest := s[19:]
	nanos := 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			if n <= 9 {
				nanos = nanos*10 + int(rest[n]-'0')
			}
			n++
		}
		if n == 1 {
			return time.Time{}, false
		}
		for i := n; i <= 9; i++ {
			nanos *= 10 // fewer than nine digits: scale up to nanoseconds
		}
		rest = rest[n:]
	}
	offset := 0 // minutes east of UTC
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, okh := decimal(rest[1:3])
		om, okm := decimal(rest[4:6])
		if !okh || !okm || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		offset = oh*60 + om
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, false
	}
	if second == 60 && ((hour*60+minute-offset)%1440+1440)%1440 != 23*60+59 {
		return time.Time{}, false // a leap second is the last second of a UTC day
	}
	t := time.Date(year, time.Month(month), day, hour, minute, min(second, 59), nanos, time.FixedZone("", offset*60))
	if second == 60 {
		t = t.Add(time.Second)
	}
	return t, true
}

// decimal reads a string of ASCII digits.
func decimal(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// daysIn returns the number of days of month in year of the proleptic
// Gregorian calendar.
func daysIn(month time.Month, year int) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
