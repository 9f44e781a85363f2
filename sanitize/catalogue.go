package sanitize

import (
	"regexp"
	"strings"
)

// The built-in rules, specific ones first: where two rules find the same
// text, the earlier one names it.
//
// The token formats are adapted from the rule catalogue of gitleaks
// (github.com/gitleaks/gitleaks, config/gitleaks.toml, v8.25 and later;
// MIT licence); each rule names the gitleaks rules it follows. The
// regular expressions are rewritten for Go's RE2 engine: no lookaround; a
// leading \b becomes an anchor checked in code (see Rule.anchor); and
// lengths have open upper bounds, so that a longer token is replaced whole
// rather than in part. Where a gitleaks rule needs the service's name
// nearby (heroku, mailgun, mailchimp, telegram) and the format is
// distinctive on its own, the name is not required. A few formats that
// gitleaks lacks come from their providers' documentation: Stripe's
// whsec_, Google's GOCSPX-, ya29. and 1//0, AWS session tokens, Groq,
// xAI, Replicate, Docker Hub and Supabase.
//
// The rules for assignments (credential), URLs, headers and configuration
// files follow gitleaks' generic-api-key, curl-auth-header,
// curl-auth-user, nuget-config-password and kubernetes-secret-yaml, but
// they are not scored by entropy alone: a value counts as a secret when
// the name it is assigned to says so and the value is written out, not
// computed (see literal, bare and secretName in rules.go).
var defaultRules = compile([]Rule{
	// Keys and key files.

	// private-key: a PEM or PGP armoured private key, also inside JSON
	// strings (\n escapes), or cut off before its END line.
	{Kind: "private_key", Keywords: []string{"-----BEGIN"}, exact: true, match: matchPEM},
	// A PuTTY .ppk file's private lines.
	{Kind: "private_key", Keywords: []string{"private-lines"}, Group: 1, anchor: atWord, reach: 8 << 10,
		Pattern: regexp.MustCompile(`(?i)Private-Lines: *\d+(?:\r?\n|\\[rn])((?:[A-Za-z0-9+/=]+(?:\r?\n|\\[rn])?)+)`)},
	// kubernetes-secret-yaml: a PEM private key in base64, as Kubernetes
	// secrets and kubeconfig files hold it.
	{Kind: "private_key", Keywords: []string{"LS0tLS1CRUdJTi"}, exact: true, near: true, anchor: atWord,
		Pattern: regexp.MustCompile(`LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}={0,2}`),
		valid:   containsAny("UFJJVkFURSBLRV", "ByaXZhdGUgS2V5", "QUklWQVRFIEtFW", "BSSVZBVEUgS0VZ")},
	// age-secret-key
	prefixed("age_key", `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`, "AGE-SECRET-KEY-1"),

	// Tokens whose prefix names them.

	// jwt
	prefixed("jwt", `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`, "eyJ"),
	// 1password-service-account-token, 1password-secret-key
	prefixed("onepassword_token", `ops_eyJ[A-Za-z0-9+/]{100,}={0,3}`, "ops_eyJ"),
	prefixed("onepassword_token", `A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}`, "A3-"),
	// grafana-api-key, grafana-cloud-api-token, grafana-service-account-token
	prefixed("grafana_token", `(?:eyJrIjoi[A-Za-z0-9]{70,}={0,3}|glc_[A-Za-z0-9+/]{32,}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})`,
		"eyJrIjoi", "glc_", "glsa_"),
	// anthropic-api-key, anthropic-admin-api-key
	prefixed("anthropic_key", `sk-ant-[A-Za-z0-9_-]{20,}`, "sk-ant-"),
	// openai-api-key: sk-, sk-proj-, sk-svcacct-, sk-admin-; the same
	// shape serves OpenRouter and DeepSeek. A hyphenated word is not one.
	withValid(prefixed("api_key", `sk-[A-Za-z0-9_-]{20,}`, "sk-"), func(_, s string) bool { return mixed(s) }),
	// stripe-access-token; whsec_ from Stripe's webhook documentation.
	prefixed("stripe_key", `(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9+/=]{24,})`,
		"sk_live", "sk_test", "sk_prod", "rk_live", "rk_test", "rk_prod", "whsec_"),
	// aws-access-token
	prefixed("aws_access_key", `(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`, "A3T", "AKIA", "ASIA", "ABIA", "ACCA"),
	// AWS session tokens, as STS issues them.
	prefixed("aws_session_token", `(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{40,}`, "IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE"),
	// alibaba-access-key-id
	prefixed("alibaba_key", `LTAI[A-Za-z0-9]{20}\b`, "LTAI"),
	// github-pat, github-oauth, github-app-token, github-refresh-token,
	// github-fine-grained-pat
	prefixed("github_token", `(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`,
		"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
	// gitlab-pat, gitlab-pat-routable, gitlab-deploy-token,
	// gitlab-feed-token, gitlab-runner-authentication-token,
	// gitlab-scim-token, gitlab-incoming-mail-token,
	// gitlab-kubernetes-agent-token, gitlab-oauth-app-secret,
	// gitlab-feature-flag-client-token, gitlab-cicd-job-token, gitlab-ptt,
	// gitlab-rrt
	prefixed("gitlab_token", `(?:gl(?:pat|dt|ft|rt|soat|imt|agent|oas|ffct|cbt|ptt|cit)-[0-9A-Za-z_-]{20,}(?:\.[0-9a-z]{2,}){0,2}|GR1348941[0-9A-Za-z_-]{20,})`,
		"glpat-", "gldt-", "glft-", "glrt-", "glsoat-", "glimt-", "glagent-", "gloas-", "glffct-", "glcbt-", "glptt-", "glcit-", "GR1348941"),
	// slack-bot-token, slack-user-token, slack-app-token,
	// slack-config-access-token, slack-config-refresh-token,
	// slack-legacy-*
	prefixed("slack_token", `(?:xox[abposre](?:\.xox[bp])?|xapp)-[A-Za-z0-9-]{10,}`, "xox", "xapp-"),
	// slack-webhook-url
	prefixed("slack_webhook", `hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}`, "hooks.slack.com"),
	// Discord webhooks; microsoft-teams-webhook.
	prefixed("webhook_url", `discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}`+
		`|webhook\.office\.com/webhookb2/[a-z0-9@-]{20,}/IncomingWebhook/[a-z0-9]{20,}/[a-z0-9-]{20,}`,
		"discord.com/api/webhooks", "discordapp.com/api/webhooks", "webhook.office.com"),
	// gcp-api-key
	prefixed("google_api_key", `AIza[0-9A-Za-z_-]{35}`, "AIza"),
	// Google OAuth client secrets, access and refresh tokens.
	prefixed("google_oauth", `(?:GOCSPX-[A-Za-z0-9_-]{28,}|ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{40,})`, "GOCSPX-", "ya29.", "1//0"),
	// huggingface-access-token, huggingface-organization-api-token
	prefixed("huggingface_token", `(?:hf_|api_org_)[A-Za-z0-9]{30,}`, "hf_", "api_org_"),
	// npm-access-token
	prefixed("npm_token", `npm_[A-Za-z0-9]{36,}`, "npm_"),
	// pypi-upload-token
	prefixed("pypi_token", `pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`, "pypi-AgEIcHlwaS5vcmc"),
	// rubygems-api-token
	prefixed("rubygems_token", `rubygems_[a-f0-9]{48}`, "rubygems_"),
	// sendgrid-api-token
	prefixed("sendgrid_key", `SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}`, "SG."),
	// twilio-api-key
	prefixed("twilio_key", `SK[0-9a-fA-F]{32}\b`, "SK"),
	// mailgun-private-api-token
	prefixed("mailgun_key", `key-[0-9a-f]{32}\b`, "key-"),
	// mailchimp-api-key: the keyword is inside the token.
	back(prefixed("mailchimp_key", `[0-9a-f]{32}-us[0-9]{1,2}\b`, "-us"), atBack(32)),
	// shopify-access-token, shopify-custom-access-token,
	// shopify-private-app-access-token, shopify-shared-secret
	prefixed("shopify_token", `shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}`, "shpat_", "shpca_", "shppa_", "shpss_"),
	// digitalocean-access-token, digitalocean-pat,
	// digitalocean-refresh-token
	prefixed("digitalocean_token", `do[opr]_v1_[a-f0-9]{64}`, "doo_v1_", "dop_v1_", "dor_v1_"),
	// databricks-api-token
	prefixed("databricks_token", `dapi[a-f0-9]{32}(?:-[0-9])?\b`, "dapi"),
	// heroku-api-key-v2
	prefixed("heroku_key", `HRKU-AA[0-9a-zA-Z_-]{58}`, "HRKU-AA"),
	// vault-service-token, vault-batch-token
	prefixed("vault_token", `hv[sbr]\.[A-Za-z0-9_-]{24,}`, "hvs.", "hvb.", "hvr."),
	// hashicorp-tf-api-token: the keyword is inside the token.
	back(prefixed("terraform_token", `[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}`, ".atlasv1."), atBack(14)),
	// doppler-api-token, and its other kinds (service, CLI, SCIM, audit).
	prefixed("doppler_token", `dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,}`, "dp."),
	// linear-api-key
	prefixed("linear_key", `lin_(?:api|oauth)_[A-Za-z0-9]{40,}`, "lin_api_", "lin_oauth_"),
	// notion-api-token, and Notion's older secret_ tokens.
	prefixed("notion_token", `(?:ntn_[0-9]{11}[A-Za-z0-9]{35,}|secret_[A-Za-z0-9]{43}\b)`, "ntn_", "secret_"),
	// postman-api-token
	prefixed("postman_key", `PMAK-[a-f0-9]{24}-[a-f0-9]{34}`, "PMAK-"),
	// pulumi-api-token
	prefixed("pulumi_token", `pul-[a-f0-9]{40}`, "pul-"),
	// sentry-user-token, sentry-org-token
	prefixed("sentry_token", `sntry[us]_[A-Za-z0-9_+/=]{40,}`, "sntryu_", "sntrys_"),
	// telegram-bot-api-token: the keyword is inside the token.
	back(prefixed("telegram_token", `[0-9]{8,10}:AA[0-9A-Za-z_-]{32,}`, ":AA"), atDigits),
	// square-access-token
	prefixed("square_token", `(?:sq0(?:atp|csp)-[0-9A-Za-z_-]{22,}|EAAA[0-9A-Za-z_-]{60,})`, "sq0atp-", "sq0csp-", "EAAA"),
	// dynatrace-api-token
	prefixed("dynatrace_token", `dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`, "dt0c01."),
	// new-relic-user-api-key, new-relic-insert-key,
	// new-relic-browser-api-token
	prefixed("newrelic_key", `NR(?:AK|AA|II|JS)-[A-Za-z0-9-]{20,}`, "NRAK-", "NRAA-", "NRII-", "NRJS-"),
	// perplexity-api-key
	prefixed("perplexity_key", `pplx-[A-Za-z0-9]{48}`, "pplx-"),
	// flyio-access-token
	prefixed("flyio_token", `(?:fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})`, "fo1_", "fm1", "fm2_"),
	// planetscale-api-token, planetscale-password,
	// planetscale-oauth-token
	prefixed("planetscale_token", `pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,}`, "pscale_"),
	// easypost-api-token, easypost-test-api-token
	prefixed("easypost_key", `EZ[AT]K[A-Za-z0-9]{54}`, "EZAK", "EZTK"),
	// atlassian-api-token
	prefixed("atlassian_token", `ATATT3[A-Za-z0-9_=-]{100,}`, "ATATT3"),
	// sendinblue-api-token (Brevo)
	prefixed("brevo_key", `x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}`, "xkeysib-", "xsmtpsib-"),
	// cloudflare-origin-ca-key
	prefixed("cloudflare_key", `v1\.0-[a-f0-9]{24}-[a-f0-9]{146}`, "v1.0-"),
	// Groq, xAI, Replicate, Docker Hub and Supabase, from their docs.
	prefixed("groq_key", `gsk_[A-Za-z0-9]{48,}`, "gsk_"),
	prefixed("xai_key", `xai-[A-Za-z0-9]{70,}`, "xai-"),
	prefixed("replicate_token", `r8_[A-Za-z0-9]{37,}`, "r8_"),
	prefixed("docker_token", `dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}`, "dckr_pat_", "dckr_oat_"),
	prefixed("supabase_token", `sbp_[a-f0-9]{40}`, "sbp_"),

	// Azure: storage and Service Bus keys in connection strings, and SAS
	// signatures.
	{Kind: "azure_key", Keywords: []string{"accountkey", "sharedaccesskey"}, Group: 1, near: true, anchor: atWord,
		Pattern: regexp.MustCompile(`(?i)(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})`)},
	{Kind: "azure_key", Keywords: []string{"sig="}, Group: 1, near: true, anchor: atWord,
		Pattern: regexp.MustCompile(`(?i)sig=([A-Za-z0-9%+/]{20,}(?:%3D|=){0,2})`)},
	// azure-ad-client-secret: the keyword is inside the secret.
	back(withGroup(prefixed("azure_key", `([a-zA-Z0-9_~.]{3}[0-9]Q~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\'"\x60\s<),])`, "Q~"), 1), atBack(4)),

	// Secrets known by their context.

	// AWS secret keys, by the name they are given.
	{Kind: "aws_secret_key", Keywords: []string{"secret"}, Group: 1, near: true, anchor: atAnyName,
		Pattern: regexp.MustCompile(`(?i)[\w.-]*?(?:aws[_.-]?secret[_.-]?(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)` + assign + `\\?["'\x60]?([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`)},
	// aws configure set [default.]aws_secret_access_key VALUE (and
	// aws_session_token), and the prompt of aws configure: AWS Secret
	// Access Key [None]: VALUE. Their keywords are the words the other
	// rules look for already, so that text without them costs nothing
	// more; the anchors tell these apart at once.
	{Kind: "aws_secret_key", Keywords: []string{"secret"}, Group: 1, near: true, anchor: atConfigureSet("aws_", "secret_access_key"),
		Pattern: regexp.MustCompile(`configure[ \t]+set[ \t]+(?:--profile(?:[ \t]+|=)[^\s\\]+[ \t]+)?(?:[\w-]+\.)?aws_secret_access_key[ \t]+\\?["']?([A-Za-z0-9/+=]{16,})`)},
	{Kind: "aws_session_token", Keywords: []string{"token"}, Group: 1, near: true, anchor: atConfigureSet("aws_session_", "token"),
		Pattern: regexp.MustCompile(`configure[ \t]+set[ \t]+(?:--profile(?:[ \t]+|=)[^\s\\]+[ \t]+)?(?:[\w-]+\.)?aws_session_token[ \t]+\\?["']?([A-Za-z0-9/+=]{16,})`)},
	{Kind: "aws_secret_key", Keywords: []string{"secret"}, Group: 1, near: true, anchor: atPhrase("secret access key"),
		Pattern: regexp.MustCompile(`(?i)secret access key[ \t]*(?:\[[^\]\r\n]{0,64}\])?[ \t]*:[ \t]*([A-Za-z0-9/+=]{40})(?:[^A-Za-z0-9/+=]|$)`)},
	// heroku-api-key: a UUID, by the name it is given.
	{Kind: "heroku_key", Keywords: []string{"heroku"}, Group: 1, near: true, anchor: atAnyName,
		Pattern: regexp.MustCompile(`(?i)[\w.-]*?heroku[\w.-]{0,20}` + assign + `\\?["'\x60]?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`)},
	// scheme://user:password@host, the user possibly empty
	// (redis://:password@host); a password may hold an @.
	{Kind: "url_password", Keywords: []string{"://"}, Group: 1, near: true, anchor: atScheme, valid: urlPassword,
		Pattern: regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/?#@"'<>\[\]]*:([^\s/"'<>@]+(?:@[^\s/"'<>@]+)*)@`)},
	// Go's MySQL DSN: user:password@tcp(host:port)/db.
	{Kind: "url_password", Keywords: []string{"@tcp(", "@unix("}, Group: 1, near: true, anchor: atDSN, valid: urlPassword,
		Pattern: regexp.MustCompile(`[\w.-]*:([^\s:/"'@]+(?:@[^\s:/"'@()]+)*)@(?:tcp|unix)\(`)},
	// curl-auth-header: Authorization headers, bearer tokens anywhere.
	{Kind: "bearer_token", Keywords: []string{"bearer"}, Group: 1, near: true, anchor: atWord, valid: tokenValue,
		Pattern: regexp.MustCompile(`(?i)bearer\s+([A-Za-z0-9\-._~+/]{16,}=*)`)},
	{Kind: "basic_auth", Keywords: []string{"authorization"}, Group: 1, near: true, anchor: atHeader,
		Pattern: regexp.MustCompile(`(?i)authorization\\?["']?\s*[:=]\s*\\?["']?basic\s+([A-Za-z0-9+/]{8,}={0,2})`)},
	// Any other scheme (token, SSWS, Api-Token, a vendor's own) or none.
	{Kind: "authorization", Keywords: []string{"authorization"}, Group: 1, near: true, anchor: atHeader, valid: and(tokenValue, notCode),
		Pattern: regexp.MustCompile(`(?i)authorization\\?["'\x60]?[ \t]*[:=][ \t]*\\?["'\x60]?(?:[A-Za-z][A-Za-z0-9._-]*[ \t]+)?([^\s"'\x60\\,;]{8,})`)},
	{Kind: "cookie", Keywords: []string{"cookie"}, Group: 1, near: true, anchor: atCookie, valid: cookieValue,
		Pattern: regexp.MustCompile(`(?i)(?:set-)?cookie\\?["'\x60]?[ \t]*:[ \t]*([^\r\n"'\x60\\]+)`)},
	// curl-auth-user: curl -u user:password.
	{Kind: "credential", Keywords: []string{"-u", "--user"}, Group: 1, near: true, anchor: atFlag, valid: notPlaceholder,
		Pattern: regexp.MustCompile(`(?:-u|--user)(?:[ \t]+|=)["']?[^\s:"']*:([^\s"']{3,})`)},
	// mysql -u root -pPASSWORD
	{Kind: "credential", Keywords: []string{"mysql"}, Group: 1, near: true, anchor: atWord, needs: "-p", valid: notPlaceholder,
		Pattern: regexp.MustCompile(`mysql(?:dump|admin|sh)?\b[^\r\n]*?[ \t]-p([^\s"'-][^\s"']*)`)},
	{Kind: "credential", Keywords: []string{"sshpass"}, Group: 1, near: true, anchor: atWord, valid: notPlaceholder,
		Pattern: regexp.MustCompile(`sshpass[ \t]+-p[ \t]*["']?([^\s"']+)`)},
	// docker login -p PASSWORD, --password PASSWORD or --password=...
	// (podman's login takes the same flags); --password-stdin is no
	// password.
	{Kind: "credential", Keywords: []string{"docker", "podman"}, Group: 1, near: true, anchor: atWord, needs: "login", valid: notPlaceholder,
		Pattern: regexp.MustCompile(`(?:docker|podman)(?:\.exe)?[ \t]+login\b[^\r\n]*?[ \t](?:-p|--password)(?:[ \t]+|=)\\?["']?([^\s"'\\]+)`)},
	// A .pgpass line, hostname:port:database:username:password: see
	// matchPgpass.
	{Kind: "credential", Keywords: []string{":*", ":0", ":1", ":2", ":3", ":4", ":5", ":6", ":7", ":8", ":9"}, exact: true, pre: pgpassFields, match: matchPgpass},
	// .netrc: machine host login user password secret, on one line or
	// several.
	{Kind: "credential", Keywords: []string{"machine"}, Group: 1, anchor: atWord, valid: notPlaceholder,
		Pattern: regexp.MustCompile(`machine[ \t]+[^\s\\]+(?:\s|\\[rn])+(?:login[ \t]+[^\s\\]+(?:\s|\\[rn])+)?password[ \t]+([^\s\\]+)`)},
	// PHP: define('DB_PASSWORD', '...'), as in wp-config.php.
	{Kind: "credential", Keywords: []string{"define"}, Group: 1, near: true, anchor: atWord, valid: notPlaceholder,
		Pattern: regexp.MustCompile(`(?i)define\(\s*["'][A-Z0-9_]*(?:PASSWORD|KEY|SALT|SECRET|TOKEN)["']\s*,\s*["']([^"'\r\n]+)["']`)},
	// nuget-config-password: <add key="ClearTextPassword" value="..." />.
	{Kind: "credential", Keywords: []string{"key="}, Group: 1, near: true, anchor: atWord, needs: "value=", valid: notPlaceholder,
		Pattern: regexp.MustCompile(`(?i)key=\\?["'][\w.:-]*(?:password|secret|token|apikey)\\?["'][ \t]+value=\\?["']([^"'\\\r\n]+)\\?["']`)},
	// Name and value pairs, as in Kubernetes and ECS environments: name:
	// DB_PASSWORD, then value: ... on the next line, or in JSON {"name":
	// "DB_PASSWORD", "value": "..."}.
	{Kind: "credential", Keywords: []string{"value"}, Group: 2, anchor: atPair, valid: pairValue,
		Pattern: regexp.MustCompile(`(?i)name\\?["']?[ \t]*:[ \t]*\\?["']?[\w.-]*?` + secretWords + `[0-9]*\\?["']?` +
			`(?:[ \t]*,[ \t]*|[ \t]*(?:\r?\n|\\[rn])[ \t]*)\\?["']?value\\?["']?[ \t]*:[ \t]*(\\?["']?)([^\s"'\\,}]+)`)},

	// Values assigned to names that say they are secret, in every way
	// configuration, commands and code write them: see matchAssignment.
	{Kind: "credential", Keywords: secretKeywords, near: true, match: matchAssignment},
})

// secretWords are the words that end the name of a secret, in any case
// and naming style, as secretSuffix checks them in code. "key" alone is
// not among them: a name that ends in it (STRIPE_KEY, cache_key) holds a
// secret only if the value looks made by a machine (see keyAssigned).
const secretWords = `(?:pass(?:w(?:or)?d|phrase|code)?|pwd|secret(?:[_.-]?key)?(?:[_.-]?base)?|token|` +
	`(?:api|access|private|signing|encryption|master|account|shared[_.-]?access|subscription|client|app|consumer|license|auth)[_.-]?(?:key|secret)|` +
	`apikey|credentials?|creds?|auth)`

// namePattern is a name that ends in a secret word (and digits).
const namePattern = `[\w.-]*?` + secretWords + `[0-9]*`

// assign is what comes between a name and its value: a closing quote or
// bracket, and =, :, :=, => (=\u003e in JSON that escapes HTML).
const assign = `\\?["'\x60]?\]?[ \t]*(?:=>|=\\u003e|:=|=|:)[ \t]*`

var secretKeywords = []string{"pass", "pwd", "secret", "token", "key", "auth", "cred"}

// prefixed is a rule for a token with a prefix of its own: the keywords
// are the prefixes, in their case, and the token starts a word there.
func prefixed(kind, pattern string, keywords ...string) Rule {
	return Rule{Kind: kind, Pattern: regexp.MustCompile(pattern), Keywords: keywords, near: true, exact: true, anchor: atWord, token: true}
}

// back is for a token whose keyword is inside it (telegram's :AA): at
// finds where the token starts.
func back(r Rule, at func(s string, hit int) int) Rule {
	r.anchor = at
	return r
}

func withGroup(r Rule, g int) Rule {
	r.Group = g
	return r
}

func withValid(r Rule, valid func(ctx, s string) bool) Rule {
	r.valid = valid
	return r
}

// compile prepares the anchored form of the rules that have an anchor.
func compile(rules []Rule) []Rule {
	for i := range rules {
		if rules[i].anchor != nil {
			rules[i].anchored = regexp.MustCompile(`^(?:` + rules[i].Pattern.String() + `)`)
		}
	}
	return rules
}

// quotedCtx reports whether the value after ctx is quoted.
func quotedCtx(ctx string) bool {
	return ctx != "" && strings.ContainsRune("\"'`", rune(ctx[len(ctx)-1]))
}

// flagValue vets the value of a command-line flag: quoted, a literal;
// bare, a literal that is more than a word of prose (--token Read...).
func flagValue(ctx, s string) bool {
	if quotedCtx(ctx) {
		return literal(ctx, s)
	}
	return bare(ctx, s) && strings.Trim(s, letters) != ""
}

// keyAssigned vets the value of a name that ends in "key".
func keyAssigned(ctx, s string) bool {
	name := strings.ToLower(nameIn(ctx))
	for _, w := range []string{"idempotency", "cache", "sort", "partition", "primary", "foreign", "hash", "lookup", "map", "object",
		"bucket", "ssh", "gpg", "pgp", "row", "range", "shard", "dedup", "routing", "message", "i18n", "translation"} {
		if strings.Contains(name, w) {
			return false
		}
	}
	if quotedCtx(ctx) {
		return quotedKeyValue(ctx, s)
	}
	return keyValue(ctx, s)
}

// urlPassword vets the password of a URL: not a placeholder, and not the
// word "password".
func urlPassword(_, s string) bool {
	return !placeholder(s) && !stopWords[strings.ToLower(strings.Trim(s, "[]"))]
}

// cookieValue accepts a Cookie header that holds a value that looks like a
// session: long and generated.
func cookieValue(_, s string) bool {
	if strings.HasPrefix(s, "=") {
		return false // cookie := ..., in Go
	}
	for part := range strings.SplitSeq(s, ";") {
		_, v, ok := strings.Cut(part, "=")
		v = strings.TrimSpace(v)
		if ok && len(v) >= 16 && !strings.Contains(v, " ") && tokenLike(v) {
			return true
		}
	}
	return false
}

// notCode refuses a value that is an expression: a call or an index.
func notCode(_, s string) bool { return !strings.ContainsAny(s, "()[]{}") }

// pairValue vets the value of a name and value pair, whose name the
// pattern has checked.
func pairValue(ctx, s string) bool {
	if quotedCtx(ctx) {
		return literalValue(s)
	}
	return bareValue(s)
}
