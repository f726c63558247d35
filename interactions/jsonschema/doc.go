// Package jsonschema is an [interactions.Validator] that validates a submitted
// value against a JSON Schema registered under a server-owned schema id and
// revision: the same schema text a host puts in
// OpenCardSnapshot.dataSchemaJson for renderers (docs/contract.md sections 3
// and 13.2).
//
// It is a separate package so that interactions itself imports no
// validator: only this package imports the schema library
// (github.com/santhosh-tekuri/jsonschema/v6).
//
// # Security considerations
//
// Schemas are the host's, never a submission's: Validate looks a schema up
// by the reference stored on the card. A registered schema is immutable:
// registering other text under the same id and revision is refused, so an
// answer validated against (id, revision) means one schema forever. Each
// schema is compiled on its own with every URL loader disabled, so a $ref
// can reach neither the file system nor the network nor another registered
// schema; a schema that needs one is refused at Register. Schemas without
// $schema are read as draft 2020-12, and "format" is asserted (a date card's
// {"format":"date"} means it). Regular expressions use Go's regexp
// (linear time).
package jsonschema
