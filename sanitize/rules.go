package sanitize

import (
	"regexp"
	"strings"
)

// Rule is one secret shape a [Redactor] looks for.
type Rule struct {
	// Kind names the secret in the replacement, [REDACTED:<Kind>], and in
	// the counts.
	Kind string
	// Pattern matches the secret, or the secret in its context.
	Pattern *regexp.Regexp
	// Group, if positive, is the submatch of Pattern that holds the secret:
	// only it is replaced, and the context around it stays. Zero replaces
	// the whole match.
	Group int
	// Keywords, if any, are ASCII strings of which at least one must appear
	// (in any case) for the rule to run at all: a cheap filter that spares
	// most text the regular expression.
	Keywords []string

	// valid, if set, vets a candidate secret, to spare placeholders and
	// ordinary words.
	valid func(secret string) bool
	// near: every match lies on a line with one of its keywords, so only
	// those lines need searching.
	near bool
	// boundary: the match must not follow a letter, digit or underscore.
	// It stands for a leading \b, which would keep the regexp package
	// from scanning for the pattern's literal prefix.
	boundary bool
}

// The built-in rules, specific ones first: a later rule never matches what
// an earlier one already replaced.
var defaultRules = nearby([]Rule{
	{Kind: "private_key", Keywords: []string{"private key"},
		// A PEM private key block, also as found inside JSON strings (\n
		// escapes), or cut off before its END line.
		Pattern: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----` +
			`(?:[A-Za-z0-9+/=\s\\:,.-]*?-----END[A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s\\:,.-]{40,})`)},
	{Kind: "jwt", Keywords: []string{"eyj"},
		Pattern: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)},
	{Kind: "anthropic_key", Keywords: []string{"sk-ant-"},
		Pattern: regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]{20,}`)},
	{Kind: "api_key", Keywords: []string{"sk-"}, valid: mixed,
		// OpenAI-style keys: sk-, sk-proj-, sk-svcacct-, sk-admin-.
		Pattern: regexp.MustCompile(`sk-[A-Za-z0-9_-]{20,}`)},
	{Kind: "stripe_key", Keywords: []string{"_live_", "_test_"},
		Pattern: regexp.MustCompile(`[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`)},
	{Kind: "aws_access_key", Keywords: []string{"akia", "asia", "abia", "acca"},
		Pattern: regexp.MustCompile(`(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{Kind: "aws_secret_key", Keywords: []string{"secret"}, Group: 1,
		Pattern: regexp.MustCompile(`(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`)},
	{Kind: "github_token", Keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		Pattern: regexp.MustCompile(`(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`)},
	{Kind: "slack_token", Keywords: []string{"xox"},
		Pattern: regexp.MustCompile(`xox[abposr]-[A-Za-z0-9-]{10,}`)},
	{Kind: "slack_webhook", Keywords: []string{"hooks.slack.com"},
		Pattern: regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}`)},
	{Kind: "google_api_key", Keywords: []string{"aiza"},
		Pattern: regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`)},
	{Kind: "url_password", Keywords: []string{"://"}, Group: 1, valid: notPlaceholder,
		// scheme://user:password@host
		Pattern: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/?#@"'<>\[\]]+:([^\s@/?#"'<>]+)@`)},
	{Kind: "bearer_token", Keywords: []string{"bearer"}, Group: 1, valid: tokenLike,
		Pattern: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)`)},
	{Kind: "basic_auth", Keywords: []string{"basic"}, Group: 1,
		Pattern: regexp.MustCompile(`(?i)\bauthorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/]{8,}={0,2})`)},
	{Kind: "credential", Keywords: []string{"password", "passwd", "secret", "token", "api_key", "apikey", "access_key", "private_key"},
		Group: 1, valid: notPlaceholder,
		// NAME=value lines of .env files and shell scripts, where NAME
		// ends in a word that says it is a secret.
		Pattern: regexp.MustCompile(`(?m)^[ \t]*(?:export[ \t]+)?[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|SECRET_KEY|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)[ \t]*=[ \t]*["']?([^\s"'#]{4,})`)},
	{Kind: "credential", Keywords: []string{"password", "passwd", "secret", "api_key", "apikey", "api-key", "token"},
		Group: 1, valid: notPlaceholder,
		// "password": "...", password: '...', api_key = "...": a quoted
		// value after a name that says it is a secret.
		Pattern: regexp.MustCompile(`(?i)(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token)["']?\s*[:=]\s*["']([^"'\s]{4,})["']`)},
})

// nearby marks every rule but private_key (a block of many lines) as
// matching only near its keywords, and the rules for token formats as
// starting at a word boundary.
func nearby(rules []Rule) []Rule {
	for i := range rules {
		r := &rules[i]
		r.near = r.Kind != "private_key"
		switch r.Kind {
		case "jwt", "anthropic_key", "api_key", "stripe_key", "aws_access_key", "github_token", "slack_token", "google_api_key":
			r.boundary = true
		}
	}
	return rules
}

// DefaultRules returns the built-in rules, which a Redactor with no Rules
// uses. Their kinds are private_key, jwt, anthropic_key, api_key,
// stripe_key, aws_access_key, aws_secret_key, github_token, slack_token,
// slack_webhook, google_api_key, url_password, bearer_token, basic_auth and
// credential. Append your own to the slice to keep them.
func DefaultRules() []Rule {
	out := make([]Rule, len(defaultRules))
	copy(out, defaultRules)
	return out
}

// mixed reports whether s has both a letter and a digit, as generated keys
// do and hyphenated words do not.
func mixed(s string) bool {
	return strings.ContainsAny(s, "0123456789") &&
		strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// tokenLike reports whether s looks generated rather than written: it has
// a digit, or both cases and some length. YOUR_ACCESS_TOKEN is not a token.
func tokenLike(s string) bool {
	if strings.ContainsAny(s, "0123456789") {
		return true
	}
	return len(s) >= 24 && strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz") &&
		strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// notPlaceholder refuses values that only stand for a secret: ${VAR},
// $VAR, <password>, {{ .Secret }}, %s, ****, xxxx.
func notPlaceholder(s string) bool {
	switch s[0] {
	case '$', '<', '{', '%':
		return false
	}
	return strings.Trim(s, "*xX.•-_") != ""
}
