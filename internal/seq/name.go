package seq

import (
	"strconv"
	"strings"
)

// Format prints n as ZooKeeper prints sequence numbers: Java's "%010d",
// which, like Go's, pads with zeros after the sign.
func Format(n int32) string {
	if n < 0 {
		// %010d counts the sign in the width: nine digits at least.
		return "-" + pad(strconv.FormatInt(-int64(n), 10), 9)
	}
	return pad(strconv.FormatInt(int64(n), 10), 10)
}

func pad(digits string, width int) string {
	if len(digits) >= width {
		return digits
	}
	return strings.Repeat("0", width-len(digits)) + digits
}

// Parse reads a sequence suffix. It accepts exactly the strings Format
// prints, and so every suffix ZooKeeper can produce: no sign but "-", no
// spaces, no missing or extra zeros.
func Parse(s string) (int32, bool) {
	if len(s) != 10 && len(s) != 11 {
		return 0, false
	}
	digits := s
	if s[0] == '-' {
		digits = s[1:]
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	if Format(int32(n)) != s {
		return 0, false
	}
	return int32(n), true
}

// Wrapped reports whether s is a sequence suffix ZooKeeper prints only
// after its counter has wrapped: a negative number. Names that hold one
// no longer sort in creation order under the Curator order (see the
// package documentation); anything that is not a suffix is not wrapped.
func Wrapped(s string) bool {
	n, ok := Parse(s)
	return ok && n < 0
}

// After returns the text after the last occurrence of marker in name, or
// name itself when marker does not occur in it. This is the key Curator
// orders lock and latch nodes by (StandardLockInternalsDriver's
// standardFixForSorting); for a name ZooKeeper made from a prefix ending
// in marker it is the sequence suffix.
func After(name, marker string) string {
	i := strings.LastIndex(name, marker)
	if i < 0 {
		return name
	}
	return name[i+len(marker):]
}
