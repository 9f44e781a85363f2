// Package judgment provides a guard that asks a model whether a tool call
// may run.
//
// [Guard] looks only at calls to tools annotated JudgmentRequired (writes,
// shell commands: see [toolloop.Annotations]); it lets every other call
// through without asking. For a judgment-required call it sends a second
// model (the judge) the call's tool, provenance and arguments, marked as
// data, and demands a strict structured answer: a call to the "verdict"
// tool, or a reply that is nothing but a JSON object,
//
//	{"decision": "allow" | "deny", "reason": "..."}
//
// Anything else fails closed: an answer that does not parse, has extra
// text, unknown fields or an unknown decision, a model error, a panic or no
// answer within the guard's timeout all deny the call. The Rule of the
// verdict says which ([RuleJudged], [RuleMalformed], [RuleFailed],
// [RuleTimeout]), for events and audits.
//
//	loop := &toolloop.AgentLoop{
//		Model: agentModel,
//		Tools: reg,
//		Guard: &judgment.Guard{Model: judgeModel, Policy: "Only allow writes under ./src."},
//	}
//
// Compose it with other guards with [toolloop.Guards].
//
// A [Grader] asks a judge the other question evaluations ask: does this
// work meet this rubric? It answers with a [Grade] (pass, score and
// reasoning) parsed as strictly, and is the judge of the eval package.
package judgment
