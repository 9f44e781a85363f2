package judgment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/judgment"
	"github.com/toolloop/toolloop/looptest"
)

func TestGrader(t *testing.T) {
	tests := []struct {
		name    string
		reply   *toolloop.Response
		want    judgment.Grade
		wantErr error
	}{
		{"tool", looptest.Calls(looptest.Call("g", judgment.GradeTool, `{"pass":true,"score":0.75,"reasoning":"mostly"}`)),
			judgment.Grade{Pass: true, Score: 0.75, Reasoning: "mostly"}, nil},
		{"text", looptest.Text(` {"reasoning":"wrong city","pass":false} `),
			judgment.Grade{Reasoning: "wrong city"}, nil},
		{"pass without score", looptest.Text(`{"pass":true,"reasoning":"ok"}`),
			judgment.Grade{Pass: true, Score: 1, Reasoning: "ok"}, nil},
		{"no reasoning", looptest.Text(`{"pass":true}`), judgment.Grade{}, judgment.ErrMalformedGrade},
		{"extra member", looptest.Text(`{"pass":true,"reasoning":"x","mood":"good"}`), judgment.Grade{}, judgment.ErrMalformedGrade},
		{"text after", looptest.Text(`{"pass":true,"reasoning":"x"} done`), judgment.Grade{}, judgment.ErrMalformedGrade},
		{"score out of range", looptest.Text(`{"pass":true,"score":2,"reasoning":"x"}`), judgment.Grade{}, judgment.ErrMalformedGrade},
		{"other tool", looptest.Calls(looptest.Call("g", "verdict", `{"pass":true,"reasoning":"x"}`)), judgment.Grade{}, judgment.ErrMalformedGrade},
		{"prose", looptest.Text(`It passes.`), judgment.Grade{}, judgment.ErrMalformedGrade},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req *toolloop.Request
			m := looptest.NewModel(t, looptest.Turn{Reply: tt.reply, Check: func(r *toolloop.Request) string { req = r; return "" }})
			g, err := (&judgment.Grader{Model: m}).Grade(context.Background(), "Says <the> city.", "The answer is Paris.")
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, g)
			require.Len(t, req.Tools, 1)
			assert.Equal(t, judgment.GradeTool, req.Tools[0].Name)
			assert.Contains(t, req.Messages[1].Text(), "<rubric>\nSays &lt;the&gt; city.\n</rubric>")
		})
	}
}

func TestGraderFailures(t *testing.T) {
	_, err := (&judgment.Grader{}).Grade(context.Background(), "r", "w")
	require.Error(t, err)

	_, err = (&judgment.Grader{Model: looptest.NewModel(t, looptest.Turn{Err: errProvider})}).Grade(context.Background(), "r", "w")
	require.ErrorIs(t, err, errProvider)

	release := make(chan struct{})
	defer close(release)
	stuck := toolloop.ModelFunc(func(context.Context, *toolloop.Request) (*toolloop.Response, error) {
		<-release
		return nil, errors.New("late")
	})
	_, err = (&judgment.Grader{Model: stuck, Timeout: time.Millisecond}).Grade(context.Background(), "r", "w")
	require.Error(t, err)
	assert.NotErrorIs(t, err, judgment.ErrMalformedGrade)
}
