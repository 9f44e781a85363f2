package sanitize_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolloop/toolloop"
	"github.com/toolloop/toolloop/sanitize"
)

// Fake secrets of the right shapes, built so that no scanner mistakes this
// file for a leak.
var (
	fakeOpenAI    = "sk-" + "proj-" + strings.Repeat("Ab3xY9", 8)
	fakeAnthropic = "sk-" + "ant-api03-" + strings.Repeat("Zq7_Lm2-", 10)
	fakeAWS       = "AKIA" + "IOSFODNN7EXAMPLE"
	fakeAWSSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"
	fakeGitHub    = "ghp_" + strings.Repeat("a1B2c3", 6)
	fakeGitHubPAT = "github_pat_" + strings.Repeat("11ABCDEFG0", 8)
	fakeSlack     = "xoxb-" + "123456789012-1234567890123-" + strings.Repeat("AbC1", 6)
	fakeGoogle    = "AIza" + "SyD" + strings.Repeat("x9_Q-", 6) + "ab"
	fakeStripe    = "sk_" + "live_" + strings.Repeat("4eC39HqLyjWDarjtT1zdp7dc", 1)
	fakeJWT       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." +
		"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0" + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	fakePEM = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Adx1rBDaNdg4\n" +
		"kS8YAJ4FBHhwMzBfxOq5rdDS1Bs0ORuO3HTXOPE3JsKPNZQUcAUh7X9BFpBwYi\n-----END RSA " + "PRIVATE KEY-----"
	fakeBearer   = "mF_9.B5f-4.1JqM" + "Zx8Lq2Wd"
	fakeTelegram = "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		// kinds counts the redactions by kind; nil means none.
		kinds map[string]int
	}{
		{name: "openai key", in: "key: " + fakeOpenAI + " ok", want: "key: [REDACTED:api_key] ok", kinds: map[string]int{"api_key": 1}},
		{name: "anthropic key", in: "ANTHROPIC=" + fakeAnthropic, want: "ANTHROPIC=[REDACTED:anthropic_key]", kinds: map[string]int{"anthropic_key": 1}},
		{name: "aws access key", in: "aws_access_key_id = " + fakeAWS + "\n", want: "aws_access_key_id = [REDACTED:aws_access_key]\n",
			kinds: map[string]int{"aws_access_key": 1}},
		{name: "aws secret key", in: "aws_secret_access_key = " + fakeAWSSecret + "\n", want: "aws_secret_access_key = [REDACTED:aws_secret_key]\n",
			kinds: map[string]int{"aws_secret_key": 1}},
		{name: "github tokens", in: fakeGitHub + " and " + fakeGitHubPAT, want: "[REDACTED:github_token] and [REDACTED:github_token]",
			kinds: map[string]int{"github_token": 2}},
		{name: "slack token", in: "token=" + fakeSlack, want: "token=[REDACTED:slack_token]", kinds: map[string]int{"slack_token": 1}},
		{name: "google key", in: "?key=" + fakeGoogle + "&q=1", want: "?key=[REDACTED:google_api_key]&q=1", kinds: map[string]int{"google_api_key": 1}},
		{name: "stripe key", in: "stripe: " + fakeStripe, want: "stripe: [REDACTED:stripe_key]", kinds: map[string]int{"stripe_key": 1}},
		{name: "jwt", in: "cookie=" + fakeJWT + ";", want: "cookie=[REDACTED:jwt];", kinds: map[string]int{"jwt": 1}},
		{name: "bearer jwt is a jwt", in: "Authorization: Bearer " + fakeJWT, want: "Authorization: Bearer [REDACTED:jwt]", kinds: map[string]int{"jwt": 1}},
		{name: "bearer token", in: "Authorization: Bearer " + fakeBearer + "\n", want: "Authorization: Bearer [REDACTED:bearer_token]\n",
			kinds: map[string]int{"bearer_token": 1}},
		{name: "basic auth", in: "Authorization: Basic dXNlcjpodW50ZXIy", want: "Authorization: Basic [REDACTED:basic_auth]",
			kinds: map[string]int{"basic_auth": 1}},
		{name: "pem private key", in: "key:\n" + fakePEM + "\nend", want: "key:\n[REDACTED:private_key]\nend", kinds: map[string]int{"private_key": 1}},
		{name: "pem private key cut off", in: strings.Split(fakePEM, "\n-----END")[0], want: "[REDACTED:private_key]", kinds: map[string]int{"private_key": 1}},
		{name: "password in url", in: "DATABASE_URL postgres://app:s3cr3t-Pa55@db.internal:5432/app",
			want: "DATABASE_URL postgres://app:[REDACTED:url_password]@db.internal:5432/app", kinds: map[string]int{"url_password": 1}},
		{name: "env file", in: "DB_HOST=localhost\nDB_PASSWORD=hunter22\nexport API_TOKEN='tok-12345'\n",
			want: "DB_HOST=localhost\nDB_PASSWORD=[REDACTED:credential]\nexport API_TOKEN='[REDACTED:credential]'\n", kinds: map[string]int{"credential": 2}},
		{name: "quoted credential", in: `{"user":"bob","password":"hunter22"}`, want: `{"user":"bob","password":"[REDACTED:credential]"}`,
			kinds: map[string]int{"credential": 1}},
		{name: "several kinds", in: fakeAWS + " " + fakeGitHub + " " + fakeAWS,
			want: "[REDACTED:aws_access_key] [REDACTED:github_token] [REDACTED:aws_access_key]", kinds: map[string]int{"aws_access_key": 2, "github_token": 1}},

		// The four formats issue 35 found missed.
		{name: "aws configure set", in: "aws configure set aws_secret_access_key " + fakeAWSSecret + " --profile ci",
			want: "aws configure set aws_secret_access_key [REDACTED:aws_secret_key] --profile ci", kinds: map[string]int{"aws_secret_key": 1}},
		{name: "aws configure prompt", in: "AWS Secret Access Key [None]: " + fakeAWSSecret + "\n",
			want: "AWS Secret Access Key [None]: [REDACTED:aws_secret_key]\n", kinds: map[string]int{"aws_secret_key": 1}},
		{name: "telegram bot url", in: "GET https://api.telegram.org/bot" + fakeTelegram + "/sendMessage?chat_id=1",
			want: "GET https://api.telegram.org/bot[REDACTED:telegram_token]/sendMessage?chat_id=1", kinds: map[string]int{"telegram_token": 1}},
		{name: "pgpass", in: "db.internal:5432:app:app_user:Xk9#mQ2vL7pR\n*:*:*:postgres:s3cr3t-Pa55\n",
			want: "db.internal:5432:app:app_user:[REDACTED:credential]\n*:*:*:postgres:[REDACTED:credential]\n", kinds: map[string]int{"credential": 2}},
		{name: "pgpass by echo", in: `echo "localhost:5432:db:me:Xk9mQ2vL7pRt" >> ~/.pgpass`,
			want: `echo "localhost:5432:db:me:[REDACTED:credential]" >> ~/.pgpass`, kinds: map[string]int{"credential": 1}},
		{name: "docker login -p", in: "docker login -u ci -p Xk9mQ2vL7pRt registry.example.com",
			want: "docker login -u ci -p [REDACTED:credential] registry.example.com", kinds: map[string]int{"credential": 1}},
		{name: "docker login --password", in: "docker login --password Xk9mQ2vL7pRt -u ci\ndocker login --password=Xk9mQ2vL7pRt",
			want: "docker login --password [REDACTED:credential] -u ci\ndocker login --password=[REDACTED:credential]", kinds: map[string]int{"credential": 2}},

		// Negatives: ordinary text stays as it is.
		{name: "near misses of the four", in: "aws configure set region eu-west-1\ndocker login -u ci --password-stdin\ndocker login -p $REGISTRY_PASSWORD\n" +
			"12:30:45:123:x:y\nmain.go:42:13: undefined: x\nfe80::1:2:3:4 and 2001:db8:85a3:0:0:8a2e:370:7334\nroot:x:0:0:root:/root:/bin/bash\n" +
			"ports 0.0.0.0:8080:80/tcp\nhttps://api.telegram.org/bot<token>/getMe\nlocalhost:5432:*:*:*\n"},
		{name: "prose", in: "The risk-assessment-and-mitigation-plan covers basic understanding of bearer bonds."},
		{name: "hex hashes", in: "commit da39a3ee5e6b4b0d3255bfef95601890afd80709\nsha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{name: "uuid and base64", in: "id 123e4567-e89b-12d3-a456-426614174000 data aGVsbG8gd29ybGQgaGVsbG8gd29ybGQgaGVsbG8=="},
		{name: "kebab-case sk- words", in: "sk-learn-model-selection-and-evaluation-guide"},
		{name: "placeholders", in: "Authorization: Bearer YOUR_ACCESS_TOKEN_HERE\nPASSWORD=${DB_PASSWORD}\nhttps://user:$PASS@host\n" +
			`{"password": "********"}`},
		{name: "go code", in: `password := os.Getenv("DB_PASSWORD")` + "\n" + `token := r.Header.Get("Authorization")`},
		{name: "url without password", in: "https://user@example.com/path and http://localhost:8080/x and ssh://git@github.com/a/b"},
		{name: "short AKIA", in: "AKIA is a prefix; AKIAXYZ is too short"},
		{name: "token url", in: "TOKEN_URL=https://auth.example.com/token"},
		{name: "pem public key", in: "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"},
		{name: "empty"},
	}
	var r sanitize.Redactor
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if tt.kinds == nil {
				want = tt.in
			}
			got, kinds := r.Redact(tt.in)
			assert.Equal(t, want, got)
			assert.Equal(t, tt.kinds, kinds)
		})
	}
}

func TestRedactorCustomRules(t *testing.T) {
	r := sanitize.Redactor{Rules: append(sanitize.DefaultRules(), sanitize.Rule{
		Kind: "employee_id", Pattern: regexpMust(`\bEMP-\d{6}\b`), Keywords: []string{"emp-"},
	})}
	got, kinds := r.Redact("EMP-123456 used " + fakeAWS)
	assert.Equal(t, "[REDACTED:employee_id] used [REDACTED:aws_access_key]", got)
	assert.Equal(t, map[string]int{"employee_id": 1, "aws_access_key": 1}, kinds)

	only := sanitize.Redactor{Rules: []sanitize.Rule{{Kind: "x", Pattern: regexpMust(`secret=(\w+)`), Group: 1}}}
	got, _ = only.Redact("secret=abc " + fakeAWS)
	assert.Equal(t, "secret=[REDACTED:x] "+fakeAWS, got, "Rules replace the defaults")
}

func TestRedactorPostToolUse(t *testing.T) {
	var r sanitize.Redactor
	ctx := context.Background()

	t.Run("nothing to redact", func(t *testing.T) {
		res := toolloop.TextResult("all clear")
		out, err := r.PostToolUse(ctx, nil, res)
		require.NoError(t, err)
		assert.Nil(t, out, "the result is kept as is")
	})

	t.Run("text, JSON and error", func(t *testing.T) {
		doc := `{"env": {"GITHUB": "` + fakeGitHub + `", "note": "line1\n` + fakeAWS + `"}, "n": [1, 2]}`
		res := &toolloop.ToolResult{
			Status:  toolloop.StatusError,
			Content: []toolloop.Content{toolloop.TextContent("failed with " + fakeOpenAI), toolloop.JSONContent(json.RawMessage(doc))},
			Error:   &toolloop.ToolError{Kind: toolloop.KindExecutionFailed, Message: "failed with " + fakeOpenAI},
			Meta:    toolloop.ResultMeta{Extra: map[string]any{"exit_code": 1}},
		}
		orig, err := json.Marshal(res)
		require.NoError(t, err)

		out, err := r.PostToolUse(ctx, nil, res)
		require.NoError(t, err)
		require.NotNil(t, out)
		assert.Equal(t, "failed with [REDACTED:api_key]", out.Content[0].Text)
		assert.Equal(t, "failed with [REDACTED:api_key]", out.Error.Message)
		require.True(t, json.Valid(out.Content[1].JSON))
		var got map[string]any
		require.NoError(t, json.Unmarshal(out.Content[1].JSON, &got))
		assert.Equal(t, map[string]any{
			"env": map[string]any{"GITHUB": "[REDACTED:github_token]", "note": "line1\n[REDACTED:aws_access_key]"},
			"n":   []any{1.0, 2.0},
		}, got)
		assert.Equal(t, map[string]int{"api_key": 1, "github_token": 1, "aws_access_key": 1}, out.Meta.Extra[sanitize.ExtraKey])
		assert.Equal(t, 1, out.Meta.Extra["exit_code"])

		after, err := json.Marshal(res)
		require.NoError(t, err)
		assert.JSONEq(t, string(orig), string(after), "the original result is not changed")
	})
}

func TestRedactEvent(t *testing.T) {
	var r sanitize.Redactor
	res := toolloop.TextResult("token " + fakeGitHub)
	e := toolloop.Event{Type: toolloop.EventPartialResult, Text: "export GH=" + fakeGitHub,
		Arguments: json.RawMessage(`{"header":"Bearer ` + fakeBearer + `"}`), Result: res}
	got := r.RedactEvent(e)
	assert.Equal(t, "export GH=[REDACTED:github_token]", got.Text)
	assert.JSONEq(t, `{"header":"Bearer [REDACTED:bearer_token]"}`, string(got.Arguments))
	assert.Equal(t, "token [REDACTED:github_token]", got.Result.Text())
	assert.Equal(t, "token "+fakeGitHub, res.Text(), "the event's result is not changed")
}

// TestRedactInLoop checks that the loop sends the model the redacted
// output and records the counts.
func TestRedactInLoop(t *testing.T) {
	env := toolloop.NewTool("env", "Prints the environment.", func(context.Context, struct{}) (any, error) {
		return "HOME=/root\nGITHUB_TOKEN=" + fakeGitHub + "\n", nil
	})
	reg := new(toolloop.ToolRegistry)
	reg.MustRegister(env)
	var r sanitize.Redactor
	var seen string
	model := toolloop.ModelFunc(func(_ context.Context, req *toolloop.Request) (*toolloop.Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Result != nil {
			seen = last.Result.Text()
			return &toolloop.Response{Message: toolloop.Message{Content: []toolloop.Content{toolloop.TextContent("ok")}}}, nil
		}
		return &toolloop.Response{Message: toolloop.Message{ToolCalls: []toolloop.ToolCall{{ID: "c1", Name: "env", Arguments: json.RawMessage(`{}`)}}}}, nil
	})
	loop := &toolloop.AgentLoop{Model: model, Tools: reg, Hooks: toolloop.Hooks{PostToolUse: []toolloop.PostToolUseHook{r.PostToolUse}}}
	res, err := loop.Run(context.Background(), []toolloop.Message{toolloop.UserMessage("env")})
	require.NoError(t, err)
	assert.Equal(t, "HOME=/root\nGITHUB_TOKEN=[REDACTED:github_token]\n", seen)
	assert.Equal(t, map[string]int{"github_token": 1}, res.Messages[2].Result.Meta.Extra[sanitize.ExtraKey])
}
