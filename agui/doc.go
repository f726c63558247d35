// Package agui serves a turn of a replay window as an AG-UI 1.x run
// (docs/contract.md section 18.2), the protocol of @ag-ui/client's
// HttpAgent and the front ends built on it.
package agui
