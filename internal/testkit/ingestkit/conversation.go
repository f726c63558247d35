package ingestkit

import (
	"encoding/json"
	"fmt"

	"github.com/Papercusp/chat-protocol-go/agent"
)

// Conversation is the request of the next step after turns turns, each a
// user text, a step asking for two tools, their results and a final step
// answering with text, ending with one more user text; reasoning is the
// reasoning of each tool step (nil: none).
func Conversation(turns int, reasoning []agent.Reasoning) *agent.Request {
	req := &agent.Request{
		System: "You are a weather assistant. Answer briefly.",
		Tools: []agent.ToolSpec{
			{Name: "get_weather", Description: "The weather at a place.", Schema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)},
			{Name: "get_time", Description: "The time in a time zone.", Schema: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}},"required":["tz"]}`)},
		},
	}
	for i := range turns {
		a, b := fmt.Sprintf("call_%04da", i), fmt.Sprintf("call_%04db", i)
		req.Messages = append(req.Messages,
			agent.Message{Role: agent.RoleUser, Text: fmt.Sprintf("What is the weather and the time in city %d?", i)},
			agent.Message{Role: agent.RoleAssistant, Text: "Let me check both.", Reasoning: reasoning, Calls: []agent.Call{
				{ID: a, Name: "get_weather", Input: json.RawMessage(fmt.Sprintf(`{"location":"City %d"}`, i))},
				{ID: b, Name: "get_time", Input: json.RawMessage(`{"tz":"Europe/Paris"}`)},
			}},
			agent.Message{Role: agent.RoleTool, Results: []agent.Result{
				{CallID: a, Name: "get_weather", Output: json.RawMessage(`{"temp_c":18,"sky":"sunny","wind_kmh":12}`)},
				{CallID: b, Name: "get_time", Output: json.RawMessage(`{"time":"14:05","date":"2025-07-11"}`)},
			}},
			agent.Message{Role: agent.RoleAssistant, Text: fmt.Sprintf("In city %d it is 18°C and sunny, and the time is 14:05.", i)},
		)
	}
	req.Messages = append(req.Messages, agent.Message{Role: agent.RoleUser, Text: "And tomorrow?"})
	return req
}
