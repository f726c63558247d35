// Package uistream serves a turn of a replay window as an AI SDK UI message
// stream (docs/contract.md section 18.1), the protocol of the npm ai
// package's useChat and Chat with DefaultChatTransport, versions 5, 6 and 7.
package uistream
