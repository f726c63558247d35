// Package conversation keeps what lies around a chat's turns
// (docs/contract.md section 20): who owns a conversation, its turns in
// order, each with the user's text that started it and, once ended, its
// reduced state (the version-1 state's turn, kept when the replay window
// prunes its frames), and at most one running turn.
//
// A host writes its [Store] once ([NewMemoryStore] for the lightweight
// profile, pgstore's ConversationStore on PostgreSQL), and its access rule
// once ([Access]); [Gate] derives from the two every hook the module's
// endpoints ask for: the version-1 stream's Authorize, recovery's
// Authorizer, the answer and cancel endpoints' Caller, and the bridges'
// ActiveTurn and Cancel. A [History] gives the conversation back as the
// version-1 state's JSON form and as the messages a model reads
// ([History.Messages]); uistream and agui build their own formats from it.
// [EndFromWindow] stores an ended turn, [Runner] runs a host's turns and
// stores them, [Settling] lets a next turn start as soon as a stream
// ended, and [Capabilities] says what a host on its stores may declare.
package conversation
