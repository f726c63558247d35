package blocks

import "github.com/Papercusp/chat-protocol-go/internal/wire"

// ReportBlock is the body of a <report>{json}</report> block: a two-tier
// status list, plans first and then each plan's items (docs/contract.md
// section 4). Its fields are
//
//	Plans []ReportPlan // at least one in a parsed block
//	Title string       // "" when the block had no usable title
//
// Its MarshalJSON writes the canonical form of the TypeScript reference:
// members in the order plans, title, absent and blank members omitted.
type ReportBlock = wire.ReportBlock

// ReportPlan is one plan of a ReportBlock: Slug, Title (never blank in a
// parsed plan: it falls back to Slug), Status, Summary and Items (nil when
// the plan had none).
type ReportPlan = wire.ReportPlan

// ReportItem is one item of a ReportPlan: ID, Text (never blank in a parsed
// item: it falls back to ID), Status and Ref, an opaque reference the host
// resolves.
type ReportItem = wire.ReportItem

// AskBlock is the body of an <ask>{json}</ask> block: a durable question to
// the owner (docs/contract.md section 4). Its fields are Question (never
// blank in a parsed block), Options and Refs (nil when empty).
type AskBlock = wire.AskBlock

// AskOption is one choice of an AskBlock: ID, Label (never blank in a parsed
// option: it falls back to ID) and Description.
type AskOption = wire.AskOption
