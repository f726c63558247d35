package recoverytest

// Site is a durable write (or, for [SiteLoad], the read) of the fake store at
// which a failpoint can fire. The compare-and-swap sites are told apart by
// the record written: a claim, a completion by the dispatching worker, the
// needs-reconciliation mark, or a host-verified result.
type Site string

// The sites of the fake store.
const (
	SiteStart     Site = "start"     // CreateTurn
	SiteClaim     Site = "claim"     // CompareAndSwapEffect to claimed
	SiteAdmit     Site = "admit"     // the admission mark of AdmitDispatch
	SiteComplete  Site = "complete"  // CompareAndSwapEffect to completed
	SiteMark      Site = "mark"      // CompareAndSwapEffect to needs-reconciliation
	SiteReconcile Site = "reconcile" // CompareAndSwapEffect to completed, Reconciled
	SiteCancel    Site = "cancel"    // EndTurn(cancelled)
	SiteFinish    Site = "finish"    // EndTurn(completed or failed)
	SiteLoad      Site = "load"      // LoadTurn ([ModeBefore] only)
)

// Mode is what happens at a site when its failpoint fires.
type Mode string

// The failpoint modes: before the write, after it, and after it with the
// acknowledgement lost.
const (
	// ModeBefore: the write is not applied and the store says so with an
	// error matching [refusal.ErrCheckpointWriteFailed] (for [SiteLoad]: the
	// read fails).
	ModeBefore Mode = "before"
	// ModeAfter: the write is applied, then the worker crashes: the call
	// returns [ErrCrashed], the Store handle is dead from then on (every call
	// fails without effect, AdmitDispatch launches nothing) and a fresh
	// worker must Open a new handle.
	ModeAfter Mode = "after"
	// ModeAckLost: the write is applied but its acknowledgement is lost:
	// the call returns an error matching [refusal.ErrNeedsReconciliation]
	// and AdmitDispatch does not launch.
	ModeAckLost Mode = "ack-lost"
)

// Failpoint is the name of one failpoint, "site.mode", as Failpoints lists
// them and [DB.Arm] takes them.
type Failpoint string

// Name returns the failpoint of site and mode.
func Name(site Site, mode Mode) Failpoint { return Failpoint(string(site) + "." + string(mode)) }

var writeSites = []Site{SiteStart, SiteClaim, SiteAdmit, SiteComplete, SiteMark, SiteReconcile, SiteCancel, SiteFinish}

// Failpoints returns every named failpoint of the fake store, in a fixed
// order: the three modes at each of the eight write sites, then the failing
// read, 25 in all. The slice is new on each call.
func Failpoints() []Failpoint {
	fps := make([]Failpoint, 0, len(writeSites)*3+1)
	for _, s := range writeSites {
		fps = append(fps, Name(s, ModeBefore), Name(s, ModeAfter), Name(s, ModeAckLost))
	}
	return append(fps, Name(SiteLoad, ModeBefore))
}

func knownFailpoint(fp Failpoint) bool {
	for _, f := range Failpoints() {
		if f == fp {
			return true
		}
	}
	return false
}
