// Package wire holds the card and answer rules that the root package and
// interactions both apply (docs/contract.md section 3), and the check of
// what text every store can hold, so that each rule is written once and
// neither package imports the other.
package wire
