package discovery

import "time"

// downs is a provider's record of failing instances, by id: Curator's
// DownInstanceManager. It is not safe for concurrent use.
type downs struct {
	timeout   time.Duration
	threshold int
	errs      map[string][]time.Time // errors noted within the timeout
	until     map[string]time.Time   // down until then
}

func newDowns() downs {
	return downs{timeout: 30 * time.Second, threshold: 2, errs: map[string][]time.Time{}, until: map[string]time.Time{}}
}

// noteError counts an error of id at now; the threshold-th error within the
// timeout takes it down for the timeout and starts the count afresh.
func (d *downs) noteError(id string, now time.Time) {
	recent := d.errs[id][:0]
	for _, at := range d.errs[id] {
		if now.Sub(at) < d.timeout {
			recent = append(recent, at)
		}
	}
	recent = append(recent, now)
	if len(recent) < d.threshold {
		d.errs[id] = recent
		return
	}
	delete(d.errs, id)
	d.markDown(id, now.Add(d.timeout))
}

func (d *downs) markDown(id string, until time.Time) { d.until[id] = until }

// isDown reports whether id is down at now, forgetting a down time that
// has passed.
func (d *downs) isDown(id string, now time.Time) bool {
	until, ok := d.until[id]
	if !ok {
		return false
	}
	if now.Before(until) {
		return true
	}
	delete(d.until, id)
	return false
}
