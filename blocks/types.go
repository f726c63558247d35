package blocks

// ReportBlock is the body of a <report>{json}</report> block: a two-tier
// status list, plans first and then each plan's items (docs/contract.md
// section 4). A parsed ReportBlock always has at least one plan; Title is ""
// when the block had no usable title.
//
// The JSON form is the canonical one of the TypeScript reference: members in
// the order plans, title; absent and blank members omitted (see MarshalJSON).
// The validate tags state the parser's invariants for the root package's
// validators; this package does not import a validator.
type ReportBlock struct {
	Plans []ReportPlan `json:"plans" validate:"min=1,dive"`
	Title string       `json:"title,omitempty"`
}

// ReportPlan is one plan of a [ReportBlock]. Title is never blank in a parsed
// plan: it falls back to Slug. Items is nil when the plan had none.
type ReportPlan struct {
	Slug    string       `json:"slug,omitempty"`
	Title   string       `json:"title" validate:"required"`
	Status  string       `json:"status,omitempty"`
	Summary string       `json:"summary,omitempty"`
	Items   []ReportItem `json:"items,omitempty" validate:"dive"`
}

// ReportItem is one item of a [ReportPlan]. Text is never blank in a parsed
// item: it falls back to ID. Ref is an opaque reference the host resolves.
type ReportItem struct {
	ID     string `json:"id,omitempty"`
	Text   string `json:"text" validate:"required"`
	Status string `json:"status,omitempty"`
	Ref    string `json:"ref,omitempty"`
}

// AskBlock is the body of an <ask>{json}</ask> block: a durable question to
// the owner with optional choices and references (docs/contract.md section 4).
// Question is never blank in a parsed block; Options and Refs are nil when
// empty.
type AskBlock struct {
	Question string      `json:"question"`
	Options  []AskOption `json:"options,omitempty"`
	Refs     []string    `json:"refs,omitempty"`
}

// AskOption is one choice of an [AskBlock]. Label is never blank in a parsed
// option: it falls back to ID.
type AskOption struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}
