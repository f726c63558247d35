// Package blocks reads and writes the structured blocks that models embed in
// their turn text: <report>{json}</report> (a ReportBlock) and
// <ask>{json}</ask> (an AskBlock), as contract-v1.md section 4 describes.
//
// The parsers are tolerant in the manner of the TypeScript reference: they
// never panic, and malformed input gives no block (ok == false) rather than
// an error. Field by field they apply the reference's rules: ECMAScript
// trim, blank and non-string values dropped, the title/slug, text/id and
// label/id fallbacks, and empty lists omitted.
package blocks
