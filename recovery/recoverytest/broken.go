package recoverytest

// Broken names a deliberate defect of the fake store ([DBOptions.Broken]).
// The known-broken stores exist to prove that [TestStore], Check and the
// simulation catch each defect; never use one for anything else.
type Broken int

// The known defects.
const (
	// Sound is no defect: the zero Broken.
	Sound Broken = iota
	// BrokenIgnoresRevision: CompareAndSwapEffect and AdmitDispatch write
	// without checking the expected revision, state or holder.
	BrokenIgnoresRevision
	// BrokenUnfenced: AdmitDispatch and EndTurn take no fence, so a
	// cancellation can commit between an admission mark and its launch, or
	// while launch runs.
	BrokenUnfenced
	// BrokenSwallowsLostAck: a write whose acknowledgement was lost
	// ([ModeAckLost]) reports success, and AdmitDispatch goes on to launch.
	BrokenSwallowsLostAck
	// BrokenSkipsAuthorize: AdmitDispatch never calls Admission.Authorize,
	// so a caller whose authority was revoked still gets its effect
	// admitted and launched; TurnRecovery refuses to launch for such a
	// store.
	BrokenSkipsAuthorize
)

// String names the defect, in the words of the check names.
func (b Broken) String() string {
	switch b {
	case Sound:
		return "sound"
	case BrokenIgnoresRevision:
		return "ignores-revision"
	case BrokenUnfenced:
		return "unfenced"
	case BrokenSwallowsLostAck:
		return "swallows-lost-ack"
	case BrokenSkipsAuthorize:
		return "skips-authorize"
	}
	return "unknown-broken"
}

// AllBroken returns every known defect, Sound excluded.
func AllBroken() []Broken {
	return []Broken{BrokenIgnoresRevision, BrokenUnfenced, BrokenSwallowsLostAck, BrokenSkipsAuthorize}
}
