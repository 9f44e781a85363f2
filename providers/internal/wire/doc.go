// Package wire holds the mapping helpers the provider packages share:
// joining streamed string fragments, preparing tool schemas, rendering
// content a provider cannot take natively, and classifying HTTP errors.
package wire
