package chatprotocol

// MarshalJSON writes the turn alone in the JSON form documented on
// [TurnState], the same bytes [ChatStateV1.MarshalJSON] writes for it in
// its turns list (docs/contract.md section 7.1). A conversation store keeps
// these bytes as an ended turn's reduced state once the replay window has
// pruned its frames (section 20); like the state's, the form is written,
// never read back into a [TurnState].
func (t *TurnState) MarshalJSON() ([]byte, error) {
	w := writer{dst: make([]byte, 0, 256+t.text.Len()+t.text.Len()/16)}
	w.turn(t)
	return w.dst, w.err
}
