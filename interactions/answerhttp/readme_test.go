package answerhttp_test

import (
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/readme"
)

// TestReadmeWiringIsTheExample: the README's card-answer snippet is the
// wiring of Example, verbatim, so the example's output is what the
// README's code does.
func TestReadmeWiringIsTheExample(t *testing.T) {
	readme.SnippetIsExample(t, "../../README.md", "Card answers (interactions)", "example_test.go")
}
