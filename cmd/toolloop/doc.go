// Command toolloop runs toolloop's agent loop from the terminal: an agent
// on the workspace tools and any MCP servers, conversations kept as
// sessions across runs, the tools such a config really exposes, one call
// through the whole pipeline, a recorded run turned into a regression
// test, a recorded run shown as a page, and a dataset of cases run and
// scored (toolloop eval).
//
// Install it with
//
//	go install github.com/toolloop/toolloop/cmd/toolloop@latest
//
// # toolloop run [flags] [prompt]
//
// Runs an agent in the terminal on the workspace tools (package builtin:
// read, write, edit and patch files, list, search, run shell commands, fetch
// pages), confined to the current directory or -C DIR, plus the tools of
// the servers of an "mcpServers" file given with -mcp FILE.
//
// The model is chosen by -provider, or else by -script, -base-url or the
// first key set in the environment:
//
//	openai             OpenAI's API; needs OPENAI_API_KEY
//	anthropic          Anthropic's API; needs ANTHROPIC_API_KEY
//	gemini             the Gemini API; needs GEMINI_API_KEY or GOOGLE_API_KEY
//	openai-compatible  any OpenAI-compatible server: -base-url URL -model NAME
//	script             offline, no key: -script FILE plays a looptest transcript
//
// -model names the model. A script is a looptest transcript (a JSON array
// of messages, as looptest.Load reads and toolloop test writes) played as
// the model: the reply to each request is the transcript's assistant
// message after as many as the request holds, so one file scripts a whole
// conversation and a resumed run picks up where it stopped. With no
// provider at all, toolloop says what to set. For an OpenAI-compatible
// server, the key is OPENAI_COMPATIBLE_API_KEY if set (OPENAI_API_KEY is
// never sent to a URL you give).
//
// A demo script ships in this module's demo folder (cmd/toolloop/demo in a
// clone of the repository; after go install, in Go's module cache, which
// is read-only, hence -log): the model lists the folder, reads its task
// list and answers, through the real tools, guard and log.
//
//	demo=$(go list -m -f '{{.Dir}}' github.com/toolloop/toolloop/cmd/toolloop@latest)/demo
//	toolloop run -C "$demo" -script "$demo/script.json" -log "$(mktemp -d)/demo.jsonl" "What is left to do?"
//
// The model's text streams as it comes, and each call prints one line with
// its tool, its arguments and its outcome (-v prints every event). The guard
// is the builtin's command policy (its denylist for exec_shell) and a rule
// that asks about every tool annotated destructive or judgment-required,
// whatever its source. At a terminal the question is
//
//	? write_file {"path":"b.txt","content":"new\n"}
//	  the tool may change files or run commands
//	  run it? [y]es, [n]o, [e]dit the arguments:
//
// e opens the arguments in $VISUAL or $EDITOR (or, with neither set, reads
// replacement JSON on one line), checks that they are a JSON object the
// tool's schema accepts, and asks again about the edited call. The answer
// reaches the loop through its Approver, so the log records the request and
// the answer, and edited arguments with it (toolloop.Approval.Arguments):
// the loop validates them again, the result records the change as the
// approval's, and the model is told the call ran with them. After the answer the call prints one line when it
// ends, with the arguments it ran with, who changed them, the decision and
// how long the question waited, apart from the time the call ran:
//
//	✓ write_file path=c.txt content="new\n" (args edited by person, approved, waited 12s for approval) → wrote 4 bytes
//
// -view serves the run's page live while it runs (see toolloop view).
//
// -yes approves every ask. Without a terminal and
// without -yes, a call that needs approval pauses the run (exit 3): the
// pause lists each waiting call by its ID, and toolloop resume decides
// them.
//
// With a prompt as argument the run is one-shot; with none, at a terminal,
// toolloop holds a conversation, reading a prompt per line until end of input
// (Ctrl-D); with none and stdin not a terminal, stdin is the prompt.
//
// Every run is recorded in an event log (package eventlog): -log FILE, by
// default .toolloop/runs/RUN_ID.jsonl in the workspace, readable by its owner
// only. While a toolloop writes a log it holds a lock on it, so no other
// toolloop resumes the same run meanwhile. API keys are never printed, and
// their values (and the secret shapes sanitize.DefaultRules knows) are
// redacted from the log, the screen and tool output before the model sees it;
// shell commands do not get the process's environment (see
// builtin.ShellOptions).
//
// The workspace tools hide the .toolloop folder, wherever it is in the
// workspace, from the model (builtin.Options.Hidden): listings and searches
// leave it out, and reads and writes in it are refused, through symbolic
// links too, so a model can neither read earlier runs (or sessions) nor
// forge a paused one. exec_shell still sees it: a shell cannot be fenced off by name, and
// the sandbox lets commands read and write the whole workspace.
//
// # Sessions
//
// toolloop run -session NAME keeps the conversation in a stored session
// (package session), so that later runs carry it on, from any terminal:
//
//	toolloop run -session fix-tests "why does go test fail?"
//	toolloop run -session fix-tests "fix it"     # the model sees the first run
//	toolloop sessions                            # list them
//	toolloop sessions fork fix-tests 4 fix-tests-2
//
// The session is created by its first run, whose system prompt (-system) it
// keeps; each later run starts from its transcript, plus any messages typed
// during the last run that it did not deliver, and the new prompt. At a
// terminal with no prompt, each prompt of the conversation is another run of
// the session. Every run is logged as without a session (-log, or
// .toolloop/runs/RUN_ID.jsonl); the session is kept besides, in an SQLite
// file (package session/sqlite): -sessions PATH, else $TOOLLOOP_SESSIONS,
// else .toolloop/sessions.db in the workspace, readable by its owner only,
// hidden from the model's tools like the logs. Secrets are redacted before
// anything is stored.
//
// A session is open in one toolloop at a time: another one that runs,
// resumes, rewinds or deletes it fails at once (exit 1), saying that it is in
// use by another toolloop or that its process died less than 30 seconds ago
// (the session's lease then lapses). A session whose run paused for approval
// takes no new run: toolloop run -session on it is a usage error (exit 2)
// that says to decide the calls with toolloop resume -session NAME.
//
// A session's run logs are records, not the way to carry it on: a run of a
// session that pauses is not sealed in its log, so toolloop resume LOG refuses
// it, and toolloop resume -session NAME resumes it (appending to the same
// log), from the paused state the session keeps. That state is sealed as
// the run pauses, with the key paused logs are sealed with (see below), and
// the seal is stored with it: the model's tools cannot reach the database,
// but exec_shell can, so resume -session checks the seal before it shows or
// decides anything, and refuses (exit 1) a paused session changed in the
// database since, or paused without a seal.
//
// # Typing while a run works
//
// In toolloop run and resume, what the person types while a run works goes
// to it (package toolloop's
// Inbox): each line, sent with Enter, is shown as queued,
//
//	» queued: use the staging database, not prod
//
// and delivered before the model's next request, after the results of the
// calls under way, never between a call and its result; the output shows
// it there ("» delivered: ..."), the log records it, and the model
// answers it in the same run. A line still queued when the run ends (it
// was interrupted, or failed, first) is not lost: in a conversation it is
// listed and goes with the next prompt, before it (Enter alone sends it);
// a one-shot run lists it on stderr. Text typed without Enter when a run
// ends starts the next prompt.
//
// Esc or Ctrl-C interrupts the run now: the model stops (the text it had
// written is kept, marked interrupted), running calls are cancelled, each
// answered with a canceled result, "interrupted (now)" is printed, and
// the conversation goes on at the prompt (a one-shot run ends, with exit
// code 130). Ctrl-C after that, while the run is still stopping (a tool
// that does not stop at once), or at the prompt, quits with exit code
// 130 after flushing the log; toolloop resume continues the run either
// way.
//
// # Background jobs
//
// A tool that can run in the background (exec_shell) runs as a job when
// the model asks: its start and its end each print a line (with the
// job's status, duration, exit code, and why a canceled job was
// canceled), its output prints with -v, and the loop's message that tells
// the model a job ended prints as "» job end delivered: ...". After each
// job starts or ends, a status line lists the jobs still running and for
// how long they had run:
//
//	& job_1 exec_shell command="go test ./..." background=true → started in the background
//	· jobs: 1 running (job_1 exec_shell 0s)
//	✓ job_1 exec_shell command="go test ./..." background=true (31s) → ok, exit code 0: ok ./...
//	· jobs: none running
//
// The run ends its jobs when it ends; toolloop view shows each job as a
// bar across the turns it ran through.
//
// At a terminal, toolloop reads keys one by one while a run works, to see
// Esc: it echoes what is typed on a line of its own after "> ", and
// Backspace, Ctrl-U and Ctrl-W edit it; arrow and function keys are
// ignored. Ctrl-C stays the terminal's signal, and at the prompt and at
// a question the terminal reads whole lines as usual (Esc there is text).
// Where a terminal cannot be read key by key (Windows), lines are read
// whole and only Ctrl-C interrupts. Without a terminal, with the prompt
// as argument, the lines of stdin read while the run works are sent to it
// the same way (scripted steering); a prompt read from stdin takes all of
// it.
//
// # toolloop resume [flags] [-approve ID] [-deny ID[=REASON]] LOG [follow-up prompt]
//
// # toolloop resume [flags] [-approve ID] [-deny ID[=REASON]] -session NAME [follow-up prompt]
//
// Continues the run recorded in LOG exactly once, appending to the log: a run
// that crashed or was killed (its transcript is replayed from the log; a call
// that was running gets a canceled result and is not run again, a call with a
// logged result is never run again), a run interrupted with Esc or Ctrl-C
// (the model is asked again from where it stopped), or a run
// paused for approval. A run that ended is not resumed; with a follow-up
// prompt the conversation goes on with it. A torn last line (a process
// killed while writing) is reported and skipped; a corrupt line elsewhere is
// an error. It takes the flags of run that choose the model and the tools.
//
// The calls a paused run waits on are decided by their IDs, which the pause
// lists: -approve ID runs one, -deny ID refuses it (the model is told the
// user declined it) and -deny ID=REASON tells the model REASON too; each
// may be given as often as needed. -yes approves every paused call they
// leave undecided. At a terminal, a call no flag decides is asked about
// again, y or n (a paused call's arguments were decided when it paused, so
// editing is not offered). Without a terminal and without -yes, resume lists
// the undecided calls and exits 2, running nothing. An ID that no paused call
// has, a call named twice, or -approve or -deny on a run that is not paused,
// is a usage error (exit 2).
//
// A paused run is sealed: as the log records the pause, toolloop seals the
// state the log replays to (every waiting call's ID, name and arguments,
// the transcript, the queued messages; see toolloop.PauseState.Seal) with
// a key of the user's, and keeps the seal beside the log, in LOG.seal,
// until the log records that the run resumed. The key is seal.key in
// toolloop's configuration folder, $TOOLLOOP_CONFIG_DIR or else toolloop
// in the user's configuration directory (~/.config/toolloop on Linux,
// ~/Library/Application Support/toolloop on macOS, %AppData%\toolloop on
// Windows): 32 random bytes, made on first use, readable by the user
// alone (a key others may read is refused). Resume checks the seal before
// it shows or decides anything, and refuses (exit 1) a paused run whose
// log was changed since it paused (by a shell command of the agent, say,
// which can reach .toolloop), one with no seal, and one sealed with
// another key.
//
// With -session NAME, resume works on the stored session instead of a log
// (every argument is then the prompt), with the same flags and the same
// rules: a paused session's calls are decided as above and its run resumed
// once; a session whose last run crashed, or was interrupted or cancelled, is
// carried on without a prompt (the loop answers the calls left without a
// result and runs none of them again); a session whose last run ended needs a
// follow-up prompt. A prompt given to a paused session is a usage error:
// decide its calls first.
//
// # toolloop sessions [list] [-user U] [-tenant T] [-status S] [-since D] [-limit N] [-json]
//
// Lists the stored sessions (-sessions PATH, $TOOLLOOP_SESSIONS, or
// .toolloop/sessions.db in the workspace, -C DIR), the most recently updated
// first: name, status (new, running, paused or ended), when it was last
// updated, what it spent (tokens and US dollars, when the model reports
// them) and its title (its first prompt) or the session it was forked from.
// -status, -user and -tenant select; -since takes a duration back from now
// (24h) or a time (2006-01-02, or RFC 3339); -limit bounds the list. -json
// prints one session.Info per line. With no database yet it lists nothing
// and makes none.
//
// # toolloop sessions show NAME [-json]
//
// Shows a session: its status, times, spending, parent, and its transcript,
// each message numbered from 0 (the numbers fork and rewind take) with its
// role and text, each call with its ID, tool and arguments, each result
// shortened; then the calls a paused session waits on, by ID, and the
// messages queued for its next run. Secrets are redacted as everywhere
// else. -json prints one object: info, messages, pending, queued, run_id,
// stop_reason and error.
//
// # toolloop sessions fork NAME AT NEW, rewind NAME AT, delete NAME
//
// fork makes a new session NEW of NAME's first AT messages, to try again
// from there (NAME may be running meanwhile); rewind cuts NAME back to its
// first AT messages (its records stay, and what it spent stays spent); delete
// removes NAME and its records. AT must not fall between a call and its
// result. A missing session, a bad AT or a name that is taken is a usage
// error (exit 2); a session in use elsewhere fails rewind and delete (exit 1).
//
// # toolloop tools [-C DIR] [-mcp FILE] [-json]
//
// Lists every tool the registry would expose to the model, sorted by name:
// its source (builtin/workspace, mcp/SERVER, ...), its annotations and its
// input schema. A server that fails to start is reported on stderr and left
// out. -json prints a stable shape for scripts:
//
//	{"tools": [{"name": "read_file", "description": "...", "source": "builtin",
//	  "source_name": "workspace", "annotations": {"read_only": true, "idempotent": true},
//	  "input_schema": {"type": "object", ...}, "exclusive": false}]}
//
// source is the kind of source (local, builtin, plugin, mcp) and source_name
// its name; annotations holds only the flags that are set (title, read_only,
// destructive, idempotent, open_world, judgment_required). Fields may be
// added; none will be removed or change meaning.
//
// # toolloop call [-C DIR] [-mcp FILE] [-yes] [-json] NAME [ARGS]
//
// Runs one call through the whole pipeline (AgentLoop.RunCall: validation,
// the guard above, approval at the terminal, hooks, truncation), printing
// every event on stderr and the result on stdout (-json: the
// toolloop.ToolResult). ARGS is a JSON object; it defaults to {}. A call
// that fails exits 1.
//
// # toolloop test LOG -o testdata/NAME.json [-stub TOOL,...]
//
// Turns a recorded run into a looptest transcript: the file looptest.Load
// reads and looptest.AssertGolden writes, so that looptest.Replay plays the
// model's turns back offline against the current tools and
// looptest.AssertTranscript fails with a diff when a tool behaves
// differently. It prints a Go test that does that, to paste into a _test.go
// file of the package that builds the tools (replace myTools() with its
// registry). The log must hold a whole run that ended with the model's
// answer (resume one that did not).
//
// -stub names tools whose outputs should not be compared, because they vary
// from run to run (time, network, randomness): their recorded results are
// written to testdata/NAME.stubs.json, {"TOOL": {"CALL_ID": RESULT}}, and the
// printed test installs a toolloop.Middleware (replayStubs) that answers
// those calls with them instead of running the tools. Every other stage of
// the pipeline still runs.
//
// # toolloop view LOG [-o run.html | -serve 127.0.0.1:PORT]
//
// Writes a self-contained HTML page of the run (default: LOG with .html), or
// serves it on a loopback address, until Ctrl-C. A served page is live: it
// follows the log as a run still writing it adds to it, updating in place
// (the turns and calls open stay open, the search and the scroll stay), and
// says whether it is following, has ended (the server stopped) or lost its
// connection (it retries). Only a loopback address is served, only to
// requests that name a loopback host, and the page asks nothing of
// anywhere but that server; a page written to a file makes no request at
// all.
//
// toolloop run -view (and resume -view) serves the run's page the same way
// on 127.0.0.1, at a free port, while the run goes on, and prints
//
//	toolloop: watching at http://127.0.0.1:PORT/
//
// It opens the page in the browser $BROWSER names, if set (a failure to
// start it is reported, never fatal), and stops serving when the run ends
// (after a moment for a page to get the log's last events) or Ctrl-C.
//
// # toolloop eval [flags] DATASET
//
// Runs a dataset of cases (package eval: JSON Lines, one case a line, each
// with its input, the tools it may use, fixtures that answer tools with
// canned results, and expectations that score the run) with the model that
// toolloop run would use (the same -provider, -model, -base-url, -script and
// keys; -script plays the same transcript for every case) and the workspace
// tools (-C, -mcp), restricted to each case's tools. There is no terminal:
// a call the guard asks about pauses its run, which fails the trial, so
// datasets serve such tools as fixtures. -trials N runs each case that sets
// no trials of its own N times; -concurrency N bounds the trials at once;
// -max-cost USD and -timeout D bound the whole eval, skipping the trials
// left; -judge-model names the model of the provider that grades "judge"
// expectations (default: the agent's).
//
// Into -o DIR (default: DATASET without its extension, plus .eval) it writes
// report.json, report.xml (JUnit, for CI), logs/ (each trial's event log)
// and report.html: each case with its status, pass rate, pass@k, flakiness
// and scorers, each trial with every score and its reason, linked to its
// run's viewer page under runs/ (as toolloop view draws it). The page needs
// no script, loads nothing and escapes every text. It prints a summary and
// the failing scores, and exits 1 if a case failed. With -compare
// OLD/report.json it prints the regressions and improvements since, and
// exits 1 if a case or a scorer regressed (a case that failed before too
// does not). Ctrl-C stops it: the trials running are canceled, the rest
// skipped, and the reports written with what ran (exit 130).
//
//	toolloop eval -script demo/script.json -o eval-out cases.jsonl
//	toolloop eval -compare last/report.json -o eval-out cases.jsonl
//
// # toolloop eval -from LOG [-o DATASET]
//
// Adds a recorded run to a dataset (appended to -o DATASET, or printed): a
// case named by the run's ID, with the run's input (its system prompt and
// prompt, or its messages) and, as its expectation, the tools it called in
// order (a trajectory, in_order, so other calls may come between them), or
// no_tool_called if it called none. The answer's wording is not pinned.
//
// # Exit codes
//
//	0    success
//	1    the run, the call or the command failed, or the session is in use;
//	     for eval, a case failed (with -compare, something regressed)
//	2    bad usage or bad input: flags, a missing, empty or corrupt log, an
//	     unknown provider or tool, a malformed MCP config or JSON arguments,
//	     a missing session, a paused session given to run, a bad dataset
//	3    the run is paused for approval: decide with toolloop resume LOG
//	     (toolloop resume -session NAME)
//	130  interrupted: Ctrl-C at the prompt or after an interrupt, or Esc
//	     or Ctrl-C in a one-shot run
package main
