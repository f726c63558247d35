package chatprotocol

// StepStatus is where a model step of a turn stands (docs/contract.md
// section 6.1): started, or one of the three ends.
type StepStatus string

// The step statuses. Any other value is refused with invalid-event.
const (
	// StepStarted opens a step: the model is called.
	StepStarted StepStatus = "started"
	// StepFinished ends a step whose model answered to its end.
	StepFinished StepStatus = "finished"
	// StepFailed ends a step whose model call failed.
	StepFailed StepStatus = "failed"
	// StepInterrupted ends a step the turn stopped short of its end (the
	// turn ended, was cancelled or was interrupted meanwhile).
	StepInterrupted StepStatus = "interrupted"
)

// Valid reports whether s is one of the four step statuses.
func (s StepStatus) Valid() bool {
	switch s {
	case StepStarted, StepFinished, StepFailed, StepInterrupted:
		return true
	}
	return false
}

// Ends reports whether s ends a step: finished, failed or interrupted.
func (s StepStatus) Ends() bool {
	return s == StepFinished || s == StepFailed || s == StepInterrupted
}

// StepEvent opens or ends one model step of a turn (docs/contract.md
// section 6.1, channel EVENT): a turn is a sequence of steps, one provider
// response each. Step is the step's number, 1 for the turn's first and one
// more for each next, at most [MaxSeq]; Status is required. Reason is
// optional free text (on an end, the provider's stop reason, or why the
// step was interrupted); Usage, optional, is what the step consumed. A
// [ChatStateV1] lists a turn's steps (section 7.1) and refuses a step out
// of order with invalid-event (section 7.2).
type StepEvent struct {
	Step    int64
	Status  StepStatus
	Reason  string
	Usage   *Usage
	Unknown []Member
}

func isStepStatus(s string) bool { return StepStatus(s).Valid() }

// MarshalJSON writes the canonical event object (see Event).
func (e *StepEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }
