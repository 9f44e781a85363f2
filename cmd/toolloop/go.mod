module github.com/toolloop/toolloop/cmd/toolloop

go 1.26.0

// Development: the toolloop modules come from this checkout (see RELEASING.md).
replace (
	github.com/toolloop/toolloop => ../..
	github.com/toolloop/toolloop/builtin => ../../builtin
	github.com/toolloop/toolloop/mcp => ../../mcp
	github.com/toolloop/toolloop/providers/anthropic => ../../providers/anthropic
	github.com/toolloop/toolloop/providers/gemini => ../../providers/gemini
	github.com/toolloop/toolloop/providers/openai => ../../providers/openai
)
