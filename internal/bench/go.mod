module github.com/Papercusp/chat-protocol-go/internal/bench

go 1.26.0

require (
	github.com/Papercusp/chat-protocol-go v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	github.com/tmaxmax/go-sse v0.12.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace github.com/Papercusp/chat-protocol-go => ../..
