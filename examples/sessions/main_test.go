package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolloop/toolloop/session"
	"github.com/toolloop/toolloop/session/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSessions runs the example twice on one file, as two invocations
// would: the second carries the conversation on.
func TestSessions(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-db", db}, &out))
	assert.Contains(t, out.String(), "support-42 (4 messages before)\n  > Can you send it to my office instead?\n  < I'm sorry, Ana:")
	assert.Contains(t, out.String(), "  cancel_order: order 42: cancelled, refund in 3 days\n  < Done, Ana:")
	assert.Contains(t, out.String(), "forked support-42-retry from support-42 at message 4\nsupport-42-retry (4 messages before)\n")
	assert.Contains(t, out.String(), "  support-42-retry  ended   6 messages, 520 tokens\n  support-42        ended  10 messages, 2580 tokens\n")

	out.Reset()
	require.NoError(t, run(context.Background(), []string{"-db", db}, &out))
	assert.Contains(t, out.String(), "support-42 (10 messages before)\n")
	assert.Contains(t, out.String(), "forked support-42-retry from support-42 at message 4\n")

	// What the file holds, read as another program would.
	store, err := sqlite.Open(db)
	require.NoError(t, err)
	defer store.Close()
	st, err := session.New(store, session.Options{}).Load(context.Background(), "support-42")
	require.NoError(t, err)
	assert.Len(t, st.Messages, 20)
	assert.Equal(t, session.StatusEnded, st.Info.Status)
	assert.Equal(t, "shop", st.Info.Tenant)
}
