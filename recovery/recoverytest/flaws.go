package recoverytest

// Flaw is a deliberate defect of the fake store. The known-broken stores
// exist to prove that TestStore, Check and the simulation catch each defect;
// never use one for anything else.
type Flaw int

// The known defects.
const (
	// Sound is no defect.
	Sound Flaw = iota
	// FlawIgnoresRevision: CompareAndSwapEffect and AdmitDispatch write
	// without checking the expected revision, state or holder.
	FlawIgnoresRevision
	// FlawUnfenced: AdmitDispatch and EndTurn take no fence, so a
	// cancellation can commit between an admission mark and its launch, or
	// while launch runs.
	FlawUnfenced
	// FlawSwallowsLostAck: a write whose acknowledgement was lost
	// (ModeAckLost) reports success, and AdmitDispatch goes on to launch.
	FlawSwallowsLostAck
	// FlawSkipsAuthorize: AdmitDispatch never calls Admission.Authorize, so
	// a caller whose authority was revoked still gets its effect admitted
	// and launched; TurnRecovery refuses to launch for such a store.
	FlawSkipsAuthorize
)

// String names the flaw.
func (f Flaw) String() string {
	switch f {
	case Sound:
		return "sound"
	case FlawIgnoresRevision:
		return "ignores-revision"
	case FlawUnfenced:
		return "unfenced"
	case FlawSwallowsLostAck:
		return "swallows-lost-ack"
	case FlawSkipsAuthorize:
		return "skips-authorize"
	}
	return "unknown-flaw"
}

// Flaws returns the known defects, Sound excluded.
func Flaws() []Flaw {
	return []Flaw{FlawIgnoresRevision, FlawUnfenced, FlawSwallowsLostAck, FlawSkipsAuthorize}
}
