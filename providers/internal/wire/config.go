package wire

import "github.com/toolloop/toolloop/providers"

// configError is an error of a model's set-up: it reads msg and matches
// providers.ErrConfig and each of also.
type configError struct {
	msg  string
	errs []error
}

func (e *configError) Error() string { return e.msg }

func (e *configError) Unwrap() []error { return e.errs }

// ConfigError returns an error whose message is msg and that matches
// providers.ErrConfig with errors.Is, and each of also (a cause, or
// another sentinel).
func ConfigError(msg string, also ...error) error {
	return &configError{msg: msg, errs: append([]error{providers.ErrConfig}, also...)}
}

// MissingKey returns the error of a constructor given no API key where one
// is needed: msg should name the config field and the environment
// variables read. It matches providers.ErrConfig and providers.ErrAuth.
func MissingKey(msg string) error {
	return ConfigError(msg, providers.ErrAuth)
}
