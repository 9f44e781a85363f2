package sanitize

import (
	"math"
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
	// Keywords, if any, are ASCII strings of at least two bytes of which at
	// least one must appear (in any case) for the rule to run at all: a
	// cheap filter that spares most text the regular expression.
	Keywords []string

	// valid, if set, vets a candidate secret, to spare placeholders and
	// ordinary words. ctx is the match up to the secret: the name and the
	// separator of an assignment.
	valid func(ctx, secret string) bool
	// anyGroup: the secret is the first submatch that took part in the
	// match (for patterns with one alternative per kind of quoting).
	anyGroup bool
	// near: every match lies on one line with one of its keywords, so
	// only the text around the keywords needs searching.
	near bool
	// exact: the keywords are matched case-sensitively.
	exact bool
	// anchor, if set, returns where a match that holds the keyword at
	// hit must start, or -1 if none can: the rule then tries its pattern
	// there only, anchored. It stands for the start of the pattern (a
	// word boundary, a name) and spares the regexp package a search.
	anchor   func(s string, hit int) int
	anchored *regexp.Regexp
	// token: an anchored match ends where the token does, at a space, a
	// quote or a backslash, so only that far is searched.
	token bool
	// reach bounds how far an anchored match may reach; 0 means
	// maxMatch.
	reach int
	// needs, if set, must appear in an anchored match's window for the
	// pattern to be tried there: a cheap test before a costly one.
	needs string
	// pre, if set, is a cheap test of each keyword found, before the rule
	// is tried there at all: for keywords so common (a colon and a digit)
	// that trying the rule at each would cost more than the test.
	pre func(s string, hit int) bool
	// match, if set, finds the rule's secrets at the keyword at hit in
	// code, in place of Pattern, and returns the index before which later
	// keywords need no try (see Rule.find).
	match func(s string, hit int, st *matchState, found func(start, end, ctx int)) int
}

// DefaultRules returns the built-in rules, which a Redactor with no Rules
// uses. Append your own to the slice to keep them.
//
// They find the token formats of some sixty services, each by the prefix
// its provider gives it (ghp_, glpat-, xoxb-, sk-ant-, AKIA, AIza, hf_,
// npm_, SG., whsec_ and so on); private keys of every PEM and PGP kind,
// PuTTY and age keys, and PEM keys encoded in base64; JWTs; passwords in
// URLs, in .pgpass and .netrc lines, and on the command lines of docker
// login, mysql, sshpass and curl -u; the keys aws configure sets and
// prompts for; Authorization, Cookie and X-Api-Key style headers; and values
// assigned to names that say they are secret (password, passwd, pwd,
// secret, token, api_key, client_secret, access_key, ...; in any case and
// any naming style) in .env files, shell commands and flags, YAML, JSON,
// INI, XML, connection strings, URL queries and source code.
//
// The kinds in the replacement and the counts are: private_key, jwt,
// api_key (OpenAI), anthropic_key, aws_access_key, aws_secret_key,
// aws_session_token, github_token, gitlab_token, slack_token,
// slack_webhook, webhook_url, google_api_key, google_oauth, stripe_key,
// huggingface_token, npm_token, pypi_token, rubygems_token, sendgrid_key,
// twilio_key, mailgun_key, mailchimp_key, shopify_token,
// digitalocean_token, databricks_token, heroku_key, azure_key,
// vault_token, terraform_token, doppler_token, linear_key, notion_token,
// postman_key, pulumi_token, sentry_token, grafana_token, telegram_token,
// square_token, dynatrace_token, newrelic_key, onepassword_token,
// perplexity_key, flyio_token, planetscale_token, easypost_key,
// atlassian_token, brevo_key, cloudflare_key, groq_key, xai_key,
// replicate_token, alibaba_key, docker_token, supabase_token, age_key,
// url_password, bearer_token, basic_auth, authorization, cookie and
// credential.
//
// Private keys and assignments (kinds private_key and credential) are
// found by code rather than by a regular expression; those two rules have
// no Pattern.
func DefaultRules() []Rule {
	out := make([]Rule, len(defaultRules))
	copy(out, defaultRules)
	return out
}

// mixed reports whether s has both a letter and a digit, as generated keys
// do and hyphenated words do not.
func mixed(s string) bool {
	return strings.ContainsAny(s, digits) && strings.ContainsAny(s, letters)
}

const (
	digits  = "0123456789"
	lower   = "abcdefghijklmnopqrstuvwxyz"
	upper   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	letters = lower + upper
)

// tokenLike reports whether s looks generated rather than written: it has
// a digit, or both cases and some length. YOUR_ACCESS_TOKEN is not a token.
func tokenLike(s string) bool {
	if placeholder(s) {
		return false
	}
	if strings.ContainsAny(s, digits) {
		return strings.ContainsAny(s, letters+"+/=_-") || len(s) >= 16
	}
	return len(s) >= 24 && strings.ContainsAny(s, lower) && strings.ContainsAny(s, upper)
}

// stopWords are values that name a type, a default or the secret itself
// rather than being one.
var stopWords = map[string]bool{
	"true": true, "false": true, "null": true, "nil": true, "none": true, "undefined": true, "empty": true,
	"required": true, "optional": true, "string": true, "str": true, "int": true, "integer": true,
	"number": true, "bool": true, "boolean": true, "bytes": true, "object": true, "any": true,
	"secret": true, "secrets": true, "password": true, "passwd": true, "passphrase": true, "token": true,
	"key": true, "apikey": true, "api_key": true, "value": true, "default": true, "hidden": true,
	"masked": true, "redacted": true, "unset": true, "unknown": true, "prompt": true, "stdin": true,
	"env": true, "file": true, "auto": true, "todo": true, "n/a": true, "secretstr": true, "char": true,
	"varchar": true, "text": true, "uuid": true, "sensitive": true, "omitempty": true, "self": true,
	"this": true, "inherit": true, "bearer": true, "basic": true, "read": true, "write": true, "files": true, "compat": true,
}

// placeholderWords, inside a value, say that it stands for a secret.
var placeholderWords = []string{"your", "example", "placeholder", "changeme", "change_me", "change-me",
	"replace", "redacted", "dummy", "xxxx", "****", "${", "{{", "<", ">", "…", "..."}

// placeholder reports whether s only stands for a secret: ${VAR}, $VAR,
// <password>, {{ .Secret }}, %s, ****, xxxx, YOUR_TOKEN, or a word such as
// "string" or "none".
func placeholder(s string) bool {
	if s == "" {
		return true
	}
	switch s[0] {
	case '$', '<', '{', '@':
		// A variable, a template, or @file: the secret is elsewhere.
		return true
	case '%':
		if formatVerb.MatchString(s) {
			return true
		}
	}
	if strings.TrimSpace(s) != s || version.MatchString(s) {
		return true // a fragment of a longer string, or a version
	}
	if strings.ContainsRune(s, '%') && strings.Trim(formatVerbs.ReplaceAllString(s, ""), ":/@.-_ ") == "" {
		return true // "%s:%s"
	}
	if strings.HasPrefix(s, "#{") {
		return true
	}
	if strings.Trim(s, "*xX.•-_#0") == "" {
		return true
	}
	l := strings.ToLower(s)
	if stopWords[l] {
		return true
	}
	for _, w := range placeholderWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return allCapsWord(s)
}

// allCapsWord reports whether s is upper case letters and underscores, as
// the names of variables are: API_KEY, TOKEN.
func allCapsWord(s string) bool {
	return strings.Trim(s, upper+"_") == ""
}

// notPlaceholder is placeholder's complement, as a validity check.
func notPlaceholder(_, s string) bool { return !placeholder(s) }

// tokenValue accepts a token-like secret.
func tokenValue(_, s string) bool { return tokenLike(s) }

var (
	// formatVerb is a printf verb or a Windows %VARIABLE%.
	formatVerb  = regexp.MustCompile(`^(?:%[-+# 0-9.]*[a-zA-Z]|%\(\w+\)[a-z]|%\w+%)$`)
	formatVerbs = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]|%\(\w+\)[a-z]`)
	// version is a version or a version range, as package manifests
	// give them: ^9.0.2, ~> 5.80, v1.2.3-rc.1.
	version     = regexp.MustCompile(`^[\^~>=<v ]*[0-9]+(?:\.[0-9x*]+)+(?:[-+][\w.]+)?$`)
	dottedChain = regexp.MustCompile(`^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$`)
	identifier  = regexp.MustCompile(`^[A-Za-z_$][\w$]*$`)
	// camelWords is a name made of words in camel case, as constants and
	// variables are named: oldMovedAlternativeDimmed, RequireAnyClientCert.
	// Random letters are seldom all words of three letters or more.
	camelWords = regexp.MustCompile(`^(?:[a-z]{2,}|[A-Z][a-z]{2,})(?:[A-Z][a-z]{2,})+$`)
)

// literal accepts the value of an assignment that is written out, not
// computed: it is no placeholder, and neither code nor prose.
func literal(ctx, s string) bool {
	return secretName(ctx) && literalValue(s) && fitsName(ctx, s)
}

// fitsName checks a value against the word its name ends with.
func fitsName(ctx, s string) bool {
	switch nameWord(ctx) {
	case "":
		return true // the pattern named no variable
	case "token", "key", "auth", "credential", "credentials", "cred", "creds":
		// Tokens and keys are made by machines, not people: a word
		// ("token": "Let's", in log probabilities) is not one.
		if !generated(s) {
			return false
		}
	}
	return !holdsName(ctx, s)
}

// literalValue is literal without the name: s is no placeholder and no
// prose.
func literalValue(s string) bool {
	if placeholder(s) || dottedChain.MatchString(s) && !strings.ContainsAny(s, digits) || camelWords.MatchString(s) {
		return false // a placeholder, a field of a variable, a constant
	}
	if strings.Contains(s, " ") {
		// A passphrase may have spaces; a description has the words that
		// join a sentence.
		l := " " + strings.ToLower(s) + " "
		for _, w := range []string{" the ", " a ", " an ", " to ", " of ", " for ", " is ", " with ", " and ", " or "} {
			if strings.Contains(l, w) {
				return false
			}
		}
	}
	return true
}

// holdsName reports whether s holds the secret word its name ends with:
// a label or a variable (token = "X-Connection-Token", key = dk.key1),
// not a secret.
func holdsName(ctx, s string) bool {
	w := nameWord(ctx)
	switch w {
	case "":
		return false
	case "credentials", "credential", "creds":
		w = "cred"
	case "password", "passwd", "passcode", "passphrase":
		w = "pass"
	}
	return strings.Contains(strings.ToLower(s), w)
}

// nameWord returns the secret word that the name at the end of ctx ends
// with, in lower case, or "".
func nameWord(ctx string) string {
	name := strings.TrimRight(strings.ToLower(nameIn(ctx)), digits)
	for _, w := range nameWords {
		if strings.HasSuffix(name, w) {
			return w
		}
	}
	return ""
}

// generated reports whether s looks made by a machine: long enough, no
// spaces, and digits, both cases or the variety of random characters.
func generated(s string) bool {
	if len(s) < 8 || strings.ContainsAny(s, " \t'") {
		return false
	}
	if strings.Trim(s, lower+"-_") == "" && strings.ContainsAny(s, "-_") {
		return false // words: default-chain
	}
	return strings.ContainsAny(s, digits) || strings.ContainsAny(s, lower) && strings.ContainsAny(s, upper) || entropy(s) >= 3.5
}

// nameWords are the words a secret's name ends with, longest first.
var nameWords = []string{"credentials", "passphrase", "credential", "password", "passcode", "passwd", "secret",
	"token", "creds", "cred", "pass", "auth", "pwd", "key"}

// bare accepts an unquoted value: a literal that is not an expression of
// code (a call, an index, a field of a variable, a variable named after
// the secret), a path or a short number.
func bare(ctx, s string) bool {
	if !secretName(ctx) || !bareValue(s) || !fitsName(ctx, s) {
		return false
	}
	// In code, spaces surround the =, and a value that is a name without
	// digits is a constant or a variable: ClientAuth =
	// RequireAnyClientCert, self.token = nextchar. An .env file has no
	// spaces there, and its values are literal.
	spaced := strings.HasSuffix(strings.TrimRight(ctx, " \t"), "=") && strings.HasSuffix(ctx, " ")
	return !(spaced && identifier.MatchString(s) && !strings.ContainsAny(s, digits))
}

// bareValue is bare without the name.
func bareValue(s string) bool {
	if len(s) < 4 || !literalValue(s) || strings.ContainsAny(s, "()[]{}") || strings.HasSuffix(s, ";") || strings.HasSuffix(s, ",") {
		return false
	}
	if dottedChain.MatchString(s) && !strings.ContainsAny(s, digits) || strings.Contains(s, "://") {
		return false
	}
	for _, p := range []string{"/", "./", "../", "~/"} {
		if strings.HasPrefix(s, p) {
			return false
		}
	}
	if strings.Trim(s, digits) == "" && len(s) < 6 {
		return false
	}
	return true
}

// bareToken accepts an unquoted value that is token-like as well.
func bareToken(ctx, s string) bool { return bare(ctx, s) && tokenLike(s) }

// keyValue vets the value of a name that ends in "key" only: such names
// also hold cache keys, sort keys and paths, so the value must look
// generated and be long.
func keyValue(ctx, s string) bool {
	if strings.ContainsAny(s, ".:") || strings.Contains(s, "/") && !base64Like(s) {
		return false // a file name, a cache key, a path
	}
	return len(s) >= 16 && bare(ctx, s) && tokenLike(s) && entropy(s) >= 3.5
}

// base64Like reports whether s looks like a key in base64: only its
// alphabet, digits and both cases.
func base64Like(s string) bool {
	return strings.Trim(s, letters+digits+"+/=") == "" && strings.ContainsAny(s, digits) &&
		strings.ContainsAny(s, lower) && strings.ContainsAny(s, upper)
}

// quotedKeyValue is keyValue for a quoted value, which may hold dots and
// slashes (base64).
func quotedKeyValue(ctx, s string) bool {
	return len(s) >= 16 && literal(ctx, s) && tokenLike(s) && !strings.Contains(s, " ") && !strings.Contains(s, "://") && entropy(s) >= 3.5
}

// entropy returns the Shannon entropy of s in bits per byte. Generated
// keys have 3.5 or more (hex has up to 4, base64 up to 6); words, paths
// and cache keys less.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// secretName checks the name that ctx ends with, the name a value is
// assigned to. The pattern has found a secret word at its end; this
// refuses names that only look like it: public keys, page tokens, and
// "pass" or "auth" inside another word (bypass, compass, oauth).
func secretName(ctx string) bool {
	if strings.HasSuffix(strings.TrimRight(ctx, ": "), "--- PASS") {
		return false // go test's verdict on a test
	}
	name := nameIn(ctx)
	if name == "" {
		return true // the pattern named no variable (an XML element, say)
	}
	l := strings.ToLower(name)
	for _, w := range []string{"public", "pubkey", "pub_key", "publishable", "page", "next", "cursor", "continuation", "sync", "prev", "csrf", "xsrf"} {
		if strings.Contains(l, w) {
			return false
		}
	}
	trimmed := strings.TrimRight(l, digits)
	// Short words must start a part of the name: db_pass, dbPass, PWD.
	for _, w := range []string{"pass", "pwd", "auth", "cred", "creds"} {
		if !strings.HasSuffix(trimmed, w) {
			continue
		}
		i := len(trimmed) - len(w)
		if i == 0 || strings.ContainsRune("_.-", rune(name[i-1])) {
			return true
		}
		return 'A' <= name[i] && name[i] <= 'Z' && 'a' <= name[i-1] && name[i-1] <= 'z' // camelCase
	}
	return true
}

// nameIn returns the name at the end of ctx, after its separator and
// quotes are cut off.
func nameIn(ctx string) string {
	ctx = strings.TrimRight(ctx, " \t=:>\"'`\\[]-,")
	i := len(ctx)
	for i > 0 && (isWordByte(ctx[i-1]) || ctx[i-1] == '.' || ctx[i-1] == '-') {
		i--
	}
	return strings.TrimLeft(ctx[i:], "-.")
}

// and combines validity checks.
func and(fs ...func(ctx, s string) bool) func(ctx, s string) bool {
	return func(ctx, s string) bool {
		for _, f := range fs {
			if !f(ctx, s) {
				return false
			}
		}
		return true
	}
}

// containsAny is a validity check that s holds one of the words.
func containsAny(words ...string) func(ctx, s string) bool {
	return func(_, s string) bool {
		for _, w := range words {
			if strings.Contains(s, w) {
				return true
			}
		}
		return false
	}
}
