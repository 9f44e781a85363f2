package looptest

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHowToUpdate(t *testing.T) {
	withFlag := flag.NewFlagSet("test", flag.ContinueOnError)
	withFlag.Bool("update", false, "rewrite golden files")
	assert.Contains(t, howToUpdate(withFlag), "go test -update")
	assert.NotContains(t, howToUpdate(withFlag), "AssertGolden with update set")

	without := flag.NewFlagSet("test", flag.ContinueOnError)
	assert.Contains(t, howToUpdate(without), "AssertGolden with update set")

	notBool := flag.NewFlagSet("test", flag.ContinueOnError)
	notBool.String("update", "", "something else")
	assert.Contains(t, howToUpdate(notBool), "AssertGolden with update set")
}
