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
// its index), or the person who decided a paused call and edited it (the
// arguments it resumed with differ from those it paused with), with the
// arguments after it. Text the loop added after the tool's output (the
// guard's note that it changed the arguments, a hook's context or
// guidance) shows as notes apart from the result. A call whose tool ran a
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
// ID (toolloop.AgentLoop.Resume) was one run already. For long runs, turns beyond the first and last few are
// collapsed, and a search box and filters by tool and by status (ok,
// error, denied, canceled, and pending or unfinished for calls the log
// does not see end) show only the matching calls.
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
// never as markup. The page's Content-Security-Policy allows only its own
// inline style and script, by hash, and no network at all.
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
// Each text on the page (arguments, result, error, model text) is cut to
// Options.FieldBytes (16 KiB by default), and the page says how many bytes
// it left out; once the page's texts reach Options.PageBytes (32 MiB), each
// further text is cut to 256 bytes. A diff shows at most 400 lines of 400
// bytes. The log is already redacted and bounded by the loop; the page
// adds nothing to it.
package view
