// Package view renders a recorded run as a self-contained HTML page: the
// page of the toolloop view command.
//
// [Render] reads a run's events (as eventlog.Events yields them from a log)
// into a model of runs, turns and calls, and writes one HTML file whose
// style, script and data are inline: it opens from a file:// URL and makes
// no request. The page shows a timeline of the turns, each with the
// model's text, usage and cost, and its calls as bars on a time axis (so
// calls that ran in parallel show side by side) and as rows that open to
// their arguments, guard verdict, approval, hook effects, result
// (truncation marked), error, file diff, and the runs of agents used as
// tools nested under the call that started them. A call's row shows the
// arguments it ran with; when they are not the model's, the model's show
// beside them, and each change is named by who made it, in order: a turn
// processor (the call started with other arguments), the argument
// repairer, the guard (with its rule and reason), a pre-tool-use hook (by
// its index), or the person who approved it with arguments they edited
// (the approval's arguments, or a paused call resumed with arguments
// that differ from those it paused with), with the arguments after it.
// Text the loop added after the tool's output (the guard's note that it
// changed the arguments, the note that a person edited them, a hook's
// context or guidance) shows as notes apart from the result. A call whose tool ran a
// program that calls other tools (code mode: see toolloop.Inner) shows
// the program's source as numbered lines, its inner calls nested under
// it in order, each a call row of its own, how many it made, and its
// output; a program that paused shows the inner call it waits on as
// pending, and, once resumed, which inner calls its journal answered
// (they have no events of their own the second time). Background jobs (see
// toolloop.Job) show as bars on an axis of their whole run, over a lane
// of its turns: a job starts in its starting call's turn and outlives it,
// to its end or, if the log has none, to the run's last event; each turn
// it ran through shows it too, and its row opens to its output reports,
// exit code, reason and result. The message that told the model a job
// ended shows as "job ended", linked to the job. Pauses, resumptions,
// limits, compactions and other transcript edits show where they
// happened; so do messages sent into a running run (toolloop.Inbox),
// where the loop delivered them, and interrupts, with their mode, and a
// model turn an interrupt cut short is marked so, with the text it had
// written. A run resumed under a new ID (its process stopped: the new
// run goes on with a transcript holding a call of the run that has no
// completion, or the run did not end or was aborted) is shown as one run
// with it: its parts in order, each saying which it resumed, and the
// page's header gives the end of the last part; a call that the resuming
// part's transcript repair answered takes the repair's status, with the
// repair shown, instead of staying unfinished. A run resumed with its own
// ID (toolloop.AgentLoop.Resume) was one run already. For long runs,
// turns beyond the first and last few are collapsed, and a search box and
// filters by tool and by status (ok, error, denied, canceled, and pending
// or unfinished for calls the log does not see end) show only the
// matching calls. Expand all opens the turns and their calls.
//
// # What the model saw
//
// Each turn shows its request, from the turn's model.request event (see
// toolloop.RequestInfo): a line with the number of new messages, the
// tools offered (named on the run's first request and whenever they
// change, else only counted, "same as previous turn"), those the model
// loaded with the tool search, the tool choice, the output format, and
// "tokens ~N of window W (P%)" (or "~N tokens" when the window is
// unknown); it opens to the messages the previous request did not have,
// each with its role: on the run's first request (shown open) the
// system and user prompts, later the model's last turn, each tool
// result as the model saw it (after truncation, redaction and the loop's
// notes, which the call's row shows apart), messages sent into the run,
// a wrap-up message, or, after a compaction or another edit, everything
// from the first message that changed (a compaction's summary). A log
// without requests (an older one, or one written without transient
// events) shows the messages the run started with at its start instead.
// A sub-agent's turns show their requests too, under the call that
// started it. The search finds a turn by its request's messages. The
// request events carry no model settings (temperature, token limits),
// so the page shows none.
//
// # Where the time went
//
// A turn's time axis shows the model's request and each call; a call
// whose completion has its stages (toolloop.CallTiming) is a stacked
// bar, with a legend: its queueing (from the model's response to its
// start), a pause for approval (a paused call, from its start to its
// resumption), then checks (resolution, repair, validation, the guard),
// approval, pre-hooks, the tool, and after (post-hooks, truncation). Its
// details say it in words ("ran 12 ms, waited 4.2 s for approval, …"),
// and the turn's summary says what its time went to: "model 820 ms ·
// tools 30 ms · approval 4.2 s · other 2 ms", where tools is while any
// call ran less the waits for approval (parallel calls count once).
// Calls without stages (older logs) are plain bars, and their turns
// have no such line.
//
// # People and answers
//
// A person who approves a call with arguments they edited
// (toolloop.Approval.Arguments, on permission.completed) changed them:
// the change is the person's, and the call shows the arguments it ran
// with and the model's beside them, as for a paused call resumed with
// edited arguments. A call of the output tool (the tool the loop offers
// for a typed answer, toolloop.OutputFormat, when the model does not
// take the format natively; a builtin of source "toolloop" that is not
// the tool search or a job tool) is an output row with the answer shown
// as JSON; a turn that answered a native output format in text shows
// its answer so too. The header has a small chart, in SVG the script
// draws, of each turn's tokens (input and output) and cost.
//
// # Live pages
//
// The script exposes window.toolloopView.update(data): it replaces the
// page's data with data, of the shape of the embedded JSON, and builds
// the page again in place, keeping which turns, calls, requests and
// background jobs are open, the search text, the filters and the scroll
// position. A server that follows a running run calls it with each new
// page model.
//
// # Why the data is JSON
//
// The page carries the run as JSON in a <script type="application/json">
// element and builds the document from it with a small vanilla script,
// rather than being rendered on the server with html/template, because
// the page needs the data in the browser anyway: search and filters run
// over every call's arguments and result, and a call's details are built
// only when it is opened, which keeps a 500-turn page fast to load. The
// JSON is written with HTML escaping (<, > and & become \u003c, \u003e
// and \u0026), so no string from the log can close the script element,
// and the script puts every string in the document as text (textContent),
// never as markup (the chart too: its elements are made with
// createElementNS, its labels set as text). The page's
// Content-Security-Policy allows only its own inline style and script,
// by hash, and no network at all. A turn's request and time axis are
// built when the turn first opens, a request's messages when it opens, a
// call's details when it opens: a 1,000-turn page is ready in under a
// second.
//
// # Live pages
//
// A page rendered with Options.Live is one a server keeps up to date while
// the run's log grows (toolloop view -serve, toolloop run -view): its
// script, page.js followed by live.js, long-polls the server for the data
// (as [Data] writes it) each time the log changes, and hands it to the
// page's update, which rebuilds the page in place. Its policy adds
// connect-src 'self' and nothing else: it still loads nothing from
// anywhere, and asks only its own origin. A header shows whether the page
// is following the log, has stopped (the server said so) or lost its
// connection (it retries).
//
// # Bounds
//
// Each text on the page (arguments, result, error, model text, a
// request's message or tool name) is cut to Options.FieldBytes (16 KiB by
// default), and the page says how many bytes it left out; once the page's
// texts reach Options.PageBytes (32 MiB), each further text is cut to 256
// bytes. A diff shows at most 400 lines of 400 bytes; a request lists at
// most 200 messages and names at most 1,000 tools. The log is already
// redacted and bounded by the loop; the page adds nothing to it.
package view
