// Package replay is the provider tests' stand-in for the APIs: an httptest
// server that plays recorded responses (JSON bodies, or event streams sent
// in small flushed pieces) and checks each request body against a golden
// file, plus the helpers the provider tests share.
package replay
