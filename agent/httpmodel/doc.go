// Package httpmodel is an [agent.Model] that speaks a provider's HTTP API
// itself, with no SDK: it writes the request of one step as the provider's
// API reference shows it, posts it with an [http.Client] and reads the
// streamed answer with [ingest.Read] (docs/contract.md sections 17 and
// 19.3). One Model serves one of the three kinds of package ingest:
//
//	m, err := httpmodel.New(ingest.AnthropicMessages, &httpmodel.Options{
//		BaseURL: "https://api.anthropic.com", APIKey: key, Model: "claude-sonnet-4-5", MaxTokens: 4096,
//	})
//
// A host on an official SDK uses the models of the nested modules
// ingest/openaisdk and ingest/anthropicsdk instead; both write the same
// requests. The reasoning a conversation holds (from such a model) is
// passed back as they pass it; this Model returns none of its own in its
// [agent.Reply], since [ingest.Read] hands a step's reasoning only to
// [ingest.Options.Reasoning], as text.
package httpmodel
