// Package replay holds what the provider packages' own tests share: steps
// that name recorded responses and golden request bodies in a package's
// testdata, played by the conformance kit's server
// (providers/providertest), the request most of them send, and the
// helpers of the transcript-validity tests. What every provider must do is
// checked by the kit; these are for each provider's wire quirks.
package replay
