package view

import "go.uber.org/goleak"

// leakOptions are the goroutines goleak may find when the tests end.
var leakOptions []goleak.Option
