// Package conversationtest is the conformance kit of conversation stores
// (docs/contract.md section 20.1), in the shape of the module's other
// kits: [TestStore] runs each check as a subtest, with a store of its own
// from [Config.NewSubject]; [Check] runs them outside a test. A host runs
// it against its own [conversation.Store]; the module runs it against
// [conversation.MemoryStore] and pgstore's ConversationStore.
package conversationtest
