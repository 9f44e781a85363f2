"use strict";
// The viewer's script. Everything from the log is put in the document with
// textContent, dataset and createElement, never as markup.
(function () {
  var D = JSON.parse(document.getElementById("data").textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var STATUSES = ["ok", "error", "denied", "canceled", "pending", "unfinished"];
  // calls lists every call of the page (child calls included) with its
  // element, its turn and the calls of the sub-agents it started.
  var calls = [];
  var turns = []; // {el, data, calls: [call index], text: lowercase}
  var state = { q: "", tool: "", status: {} };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function plural(n, w) { return n + " " + w + (n === 1 ? "" : "s"); }
  // num groups the digits of n by thousands (toLocaleString is slow).
  function num(n) {
    n = Number(n || 0);
    if (!isFinite(n) || n % 1 !== 0) return n.toLocaleString("en-US");
    var s = String(Math.abs(n)), out = "";
    while (s.length > 3) { out = "," + s.slice(-3) + out; s = s.slice(0, -3); }
    return (n < 0 ? "-" : "") + s + out;
  }
  function dur(ms) {
    if (ms === undefined || ms === null || ms < 0) return "—";
    if (ms < 1) return ms.toFixed(2) + " ms";
    if (ms < 1000) return Math.round(ms) + " ms";
    if (ms < 60000) return (ms / 1000).toFixed(2) + " s";
    var m = Math.floor(ms / 60000), s = Math.round((ms % 60000) / 1000);
    return m + "m" + (s < 10 ? "0" : "") + s + "s";
  }
  function money(c) { return "$" + (c < 0.01 ? c.toFixed(5) : c.toFixed(3)); }
  function usage(u) {
    if (!u) return "";
    var s = "in " + num(u.input_tokens) + " · out " + num(u.output_tokens);
    if (u.cache_read_tokens) s += " · cache read " + num(u.cache_read_tokens);
    if (u.cache_write_tokens) s += " · cache write " + num(u.cache_write_tokens);
    if (u.reasoning_tokens) s += " · reasoning " + num(u.reasoning_tokens);
    return s;
  }
  function str(t) { return t ? t.s : ""; }
  // block shows a bounded text from the log, with the cut marked.
  function block(parent, title, t, cls) {
    if (!t) return;
    if (title) add(parent, el("h4", null, title));
    var pre = add(parent, el("pre", cls, t.s));
    if (t.more) add(pre, el("span", "cut", "\n… " + num(t.more) + " more bytes not shown (display bound " + num(D.bound) + " bytes)"));
  }
  function summarize(t, n) {
    var s = str(t).replace(/\s+/g, " ");
    return s.length > n ? s.slice(0, n) + "…" : s;
  }

  // --- summary and controls -------------------------------------------------
  function header() {
    var sum = document.getElementById("summary");
    sum.textContent = "";
    var first = D.runs[0], total = 0, cost = null, u = null;
    var tops = [];
    D.runs.forEach(function (r) { tops.push(r); (r.parts || []).forEach(function (p) { tops.push(p); }); });
    tops.forEach(function (r) { total = Math.max(total, r.at + r.dur); });
    tops.forEach(function (r) {
      if (r.acct) {
        cost = (cost || 0) + (r.acct.cost_usd || 0);
        if (!u) u = { input_tokens: 0, output_tokens: 0 };
        u.input_tokens += r.acct.usage.input_tokens; u.output_tokens += r.acct.usage.output_tokens;
      }
    });
    add(sum, el("span", null, "started " + D.start));
    add(sum, el("span", null, "took " + dur(total)));
    add(sum, el("span", null, plural(D.turns, "turn")));
    add(sum, el("span", null, plural(D.calls, "call")));
    if (D.jobs) add(sum, el("span", null, plural(D.jobs, "background job")));
    if (u) add(sum, el("span", null, usage(u)));
    if (cost !== null) add(sum, el("span", null, money(cost)));
    // A run resumed under new IDs ends as its last part does.
    var fin = first && first.parts ? first.parts[first.parts.length - 1] : first;
    if (first && first.parts) add(sum, el("span", "flag", "resumed " + plural(first.parts.length, "time")));
    if (fin && fin.paused) add(sum, el("span", "flag warn", "paused: waiting for approval"));
    else if (fin && fin.ended) add(sum, el("span", null, "stop: " + (fin.stop || "—")));
    else if (fin) add(sum, el("span", "flag warn", "the log ends before the run does"));
    var pr = document.getElementById("problems");
    pr.textContent = D.problems ? "Lines of the log that are not events:\n" + D.problems.join("\n") : "";
    var sel = document.getElementById("tool");
    while (sel.options.length > 1) sel.remove(1);
    D.tools.forEach(function (name) {
      var n = 0;
      calls.forEach(function (c) { if (c.d.tool === name) n++; });
      var o = add(sel, el("option", null, name + " (" + n + ")"));
      o.value = name;
    });
    sel.value = state.tool;
    if (sel.value !== state.tool) state.tool = "";
    var st = document.getElementById("statuses");
    st.textContent = "";
    // A status no call has any more (after an update: a pending call was
    // decided) filters nothing: it has no chip to clear it with.
    for (var k in state.status) if (!D.counts[k]) delete state.status[k];
    STATUSES.forEach(function (s) {
      if (!D.counts[s]) return;
      var b = add(st, el("button", "chip"));
      b.type = "button"; b.dataset.status = s; b.setAttribute("aria-pressed", state.status[s] ? "true" : "false");
      b.title = "show only calls with status " + s + " (click again to clear)";
      add(b, el("span", "dot s-" + s));
      add(b, document.createTextNode(s + " " + D.counts[s]));
      b.addEventListener("click", function () {
        state.status[s] = !state.status[s];
        b.setAttribute("aria-pressed", state.status[s] ? "true" : "false");
        apply();
      });
    });
  }

  // --- timeline ---------------------------------------------------------------
  function runEl(r, parent, depth) {
    var sec = add(parent, el("section", "run"));
    sec.dataset.run = r.id;
    if (depth === 0) {
      var h = add(sec, el("div", "run-head", (r.resumes ? "Resumed as run " : "Run ") + r.id));
      var bits = [dur(r.dur), plural(r.turns.length, "turn")];
      if (r.acct) {
        bits.push(usage(r.acct.usage));
        if (r.acct.cost_usd) bits.push(money(r.acct.cost_usd));
        if (r.acct.unpriced_turns) bits.push(r.acct.unpriced_turns + " unpriced");
        if (r.counted) bits.push("counted from its turns: the log ends before the run does");
      }
      add(h, el("span", "dim", " · " + bits.join(" · ")));
    } else {
      add(sec, el("div", "child-head", "↳ sub-agent run " + r.id + " · " + dur(r.dur) + " · " + plural(r.turns.length, "turn") +
        (r.acct ? " · " + usage(r.acct.usage) : "")));
    }
    var open = D.openTurns, n = r.turns.length;
    r.notes && r.notes.forEach(function (nt) { noteEl(sec, nt, r); });
    if (r.jobs) jobsEl(r, sec);
    r.turns.forEach(function (t, i) {
      turnEl(t, sec, depth, depth > 0 || i < open || i >= n - open, r, i === 0 && !r.resumes);
    });
    if (r.ended && r.stop && r.parts) add(sec, el("div", "dim", "this part ended with " + r.stop + "; the run went on in run " + r.parts[0].id));
    // The runs that resumed this one, one story: each says which it resumed.
    (r.parts || []).forEach(function (p, i) {
      var ps = runEl(p, sec, depth);
      ps.classList.add("part");
      add(ps.firstChild, el("span", "dim", " · resumes run " + p.resumes + " (part " + (i + 2) + " of " + (r.parts.length + 1) + ")"));
      if (p.ended && p.stop && i < r.parts.length - 1) add(ps, el("div", "dim", "this part ended with " + p.stop));
    });
    return sec;
  }

  // noteEl shows a note of run r; the message that told the model jobs
  // ended links to their bars.
  function noteEl(parent, nt, r) {
    var d = add(parent, el("div", "note " + nt.kind));
    if (nt.kind === "end" && nt.detail) d.classList.add("err");
    add(d, el("span", "t", nt.title));
    if (nt.jobs && r) {
      nt.jobs.forEach(function (id) {
        var target = jobElId(r, id);
        var a = add(d, el("a", "joblink", "→ " + id));
        a.href = "#" + encodeURIComponent(target);
        a.dataset.job = id;
        a.addEventListener("click", function (e) {
          e.preventDefault();
          if (jobShow[target]) jobShow[target]();
        });
      });
    }
    if (nt.detail) block(d, null, nt.detail);
    if (nt.kind === "start" && r && r.prompt && r.notes && r.notes.filter(function (n) { return n.kind === "start"; })[0] === nt) {
      // The log has no request of the first turn: its messages are the
      // run's start's.
      var pr = add(d, el("details", "req prompt"));
      add(pr, el("summary", null, "the messages it started with"));
      pr.open = true;
      var body = add(pr, el("div", "req-body"));
      r.prompt.forEach(function (m, i) { msgEl(body, m, i); });
    }
    return d;
  }

  // --- background jobs --------------------------------------------------------
  // jobShow opens a job's row and brings it into view, by element ID.
  var jobShow = {};
  // jobOpen opens or closes a job's row, by element ID, for update.
  var jobOpen = {};
  function jobElId(r, id) { return "job-" + r.id + "-" + id; }
  function turnsOf(j) { return j.turn === j.endTurn ? "turn " + j.turn : "turns " + j.turn + "–" + j.endTurn; }
  function jobLabel(j) { return j.id + " " + j.tool + " · " + j.status + " · " + turnsOf(j) + " · " + dur(j.dur); }
  function clamp(x) { return Math.min(Math.max(x, 0), 100); }

  // jobsEl draws the run's background jobs on an axis of the whole run,
  // under a lane of its turns: a job that outlives the call that started
  // it shows across the turns it ran through. Each job's row opens to its
  // output and its end.
  function jobsEl(r, parent) {
    var box = add(parent, el("div", "jobs"));
    add(box, el("div", "jobs-head", plural(r.jobs.length, "background job")));
    var ax = add(box, el("div", "axis run-axis"));
    var span = Math.max(r.dur, 0.001);
    function place(b, at, d) {
      var left = clamp((at - r.at) / span * 100);
      b.style.left = left + "%";
      b.style.width = Math.min(Math.max(d / span * 100, 0.3), 100 - left) + "%";
    }
    var lane = add(ax, el("div", "lane turns"));
    r.turns.forEach(function (t) {
      var seg = add(lane, el("div", "seg", String(t.n)));
      seg.dataset.turn = t.n;
      seg.title = "turn " + t.n + " · " + dur(t.dur);
      place(seg, t.at, t.dur);
    });
    r.jobs.forEach(function (j) {
      var l = add(ax, el("div", "lane joblane"));
      var b = add(l, el("div", "bar job s-" + j.status));
      b.dataset.job = j.id;
      b.title = jobLabel(j);
      place(b, j.at, j.dur);
      add(l, el("span", "lbl", jobLabel(j)));
    });
    var ticks = add(box, el("div", "ticks"));
    add(ticks, el("span", null, "0"));
    add(ticks, el("span", null, dur(r.dur / 2)));
    add(ticks, el("span", null, dur(r.dur)));
    r.jobs.forEach(function (j) { jobEl(r, j, box); });
  }

  function jobEl(r, j, parent) {
    var box = add(parent, el("div", "job"));
    box.id = jobElId(r, j.id);
    box.dataset.job = j.id; box.dataset.status = j.status;
    var row = add(box, el("div", "row"));
    add(row, el("span", "badge s-" + j.status, j.status));
    add(row, el("span", "tool", j.id + " " + j.tool));
    add(row, el("span", "sum mono", summarize(j.reason || j.message || j.result, 160)));
    var flags = add(row, el("span", "flags"));
    add(flags, el("span", "flag", turnsOf(j)));
    if (j.exit !== undefined && j.exit !== null) add(flags, el("span", j.exit === 0 ? "flag" : "flag warn", "exit " + j.exit));
    if (j.output) add(flags, el("span", "flag", plural(j.output.length + (j.outputMore || 0), "output")));
    if (j.told) add(flags, el("span", "flag", "told in turn " + j.told));
    add(row, el("span", "dur", dur(j.dur)));
    var detail = null;
    row.tabIndex = 0;
    row.setAttribute("role", "button");
    row.setAttribute("aria-expanded", "false");
    function toggle(open) {
      if (!detail) { detail = jobDetails(j); box.appendChild(detail); detail.classList.add("gone"); }
      open = open === undefined ? detail.classList.contains("gone") : open;
      detail.classList.toggle("gone", !open);
      box.classList.toggle("open", open);
      row.setAttribute("aria-expanded", open ? "true" : "false");
    }
    row.addEventListener("click", function () { toggle(); });
    row.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); }
    });
    jobShow[box.id] = function () { toggle(true); box.scrollIntoView({ block: "center" }); };
    jobOpen[box.id] = toggle;
    return box;
  }

  // jobDetails builds a job's full view when it is first opened.
  function jobDetails(j) {
    var d = el("div", "detail");
    var kv = add(d, el("table", "kv"));
    function row(k, v) { var tr = add(kv, el("tr")); add(tr, el("td", null, k)); add(tr, el("td", "mono", v)); }
    row("job", j.id);
    row("started by call", j.callId + " (" + j.tool + ")");
    row("status", j.status + (j.kind && j.kind !== j.status ? " (" + j.kind + ")" : ""));
    row("ran through", turnsOf(j));
    row("duration", dur(j.dur) + (j.status === "unfinished" ? ", to the last event of the run: the log has no end for it" : ""));
    if (j.exit !== undefined && j.exit !== null) row("exit code", String(j.exit));
    if (j.outputBytes) row("output", num(j.outputBytes) + " bytes");
    row("told the model", j.told ? "in a message delivered in turn " + j.told : "in no message (a job_wait or job_cancel result may have told it)");
    if (j.reason) block(d, "Reason", j.reason);
    if (j.output) {
      add(d, el("h4", null, "Output (" + plural(j.output.length + (j.outputMore || 0), "report") + ")"));
      j.output.forEach(function (o) {
        var od = add(d, el("div", "out"));
        add(od, el("div", "dim", "+" + dur(o.at - j.at)));
        block(od, null, o.text);
      });
      if (j.outputMore) add(d, el("div", "dim", plural(j.outputMore, "more report") + " not listed"));
    }
    if (j.message) block(d, "Error" + (j.kind ? " (" + j.kind + ")" : ""), j.message, "err");
    if (j.result) block(d, "Result", j.result);
    return d;
  }

  function turnEl(t, parent, depth, open, r, first) {
    var det = add(parent, el("details", "turn"));
    det.dataset.turn = t.n;
    det.open = open;
    var rec = { el: det, d: t, calls: [], text: (str(t.text) + "\n" + str(t.reasoning) + "\n" +
      (t.notes || []).map(function (n) { return n.title + " " + str(n.detail); }).join("\n")).toLowerCase(),
      defaultOpen: open, depth: depth, key: (r ? r.id : "") + "/" + depth + "/" + t.n, req: null };
    turns.push(rec);
    var s = add(det, el("summary"));
    add(s, el("span", "n", (depth > 0 ? "sub-agent turn " : "Turn ") + t.n));
    add(s, el("span", "dim", dur(t.dur)));
    if (t.modelDur >= 0) add(s, el("span", "dim", "model " + dur(t.modelDur)));
    if (t.usage) add(s, el("span", "dim", usage(t.usage)));
    if (t.cost !== undefined && t.cost !== null) add(s, el("span", "dim", money(t.cost)));
    var inner = 0;
    t.calls.forEach(function (c) { inner += (c.inner || []).length; });
    add(s, el("span", null, plural(t.calls.length, "call") + (inner ? " (+" + inner + " inner)" : "")));
    if (t.parallel > 1) add(s, el("span", "badge par", "×" + t.parallel + " parallel"));
    var counts = {};
    t.calls.forEach(function (c) {
      [c].concat(c.inner || []).forEach(function (k) { counts[k.status] = (counts[k.status] || 0) + 1; });
    });
    STATUSES.forEach(function (st) {
      if (counts[st] && st !== "ok") add(s, el("span", "badge s-" + st, counts[st] + " " + st));
    });
    if (t.stop && t.stop !== "tool_use" && t.stop !== "stop") add(s, el("span", "flag warn", t.stop));
    if (t.answer || t.calls.some(function (c) { return c.output; })) add(s, el("span", "flag out", "answer"));
    if (t.spent) add(s, el("span", "dim spent", spentText(t.spent)));
    if (t.text) add(s, el("span", "dim", summarize(t.text, 90)));

    var body = add(det, el("div", "turn-body"));
    // The request and the time axis show only in an open turn: they are
    // built when it first opens.
    var reqSlot = t.request ? add(body, el("div", "req-slot")) : null;
    if (t.reasoning) add(body, el("div", "text reasoning", t.reasoning.s));
    if (t.text) {
      var tx = add(body, el("div", "text", t.text.s));
      if (t.text.more) add(tx, el("span", "cut", " … " + num(t.text.more) + " more bytes"));
    }
    if (t.stop === "interrupted") add(body, el("div", "flag warn cut-short", "interrupted: the model's turn was cut short; the text above is what it had written"));
    if (t.model) add(body, el("div", "dim", "model " + t.model + (t.stop ? " · stop: " + t.stop : "")));
    // Notes from before the turn's calls come first; the others (a pause
    // and its resumption, a limit, the run's end) after the calls.
    var firstCall = t.calls.length ? Math.min.apply(null, t.calls.map(function (c) { return c.at; })) : Infinity;
    var notes = t.notes || [];
    notes.forEach(function (nt) { if (nt.at <= firstCall) noteEl(body, nt, r); });
    // The run's jobs that ran during this turn.
    var jobs = ((r && r.jobs) || []).filter(function (j) { return j.turn <= t.n && t.n <= j.endTurn; });
    var slot = t.calls.length || jobs.length ? add(body, el("div", "axis-slot")) : null;
    var drawn = false;
    rec.draw = function (now) {
      if (drawn || !(now === true || det.open)) return;
      drawn = true;
      if (reqSlot) rec.req = requestEl(reqSlot, t.request, first);
      if (slot) axis(slot, t, jobs);
    };
    det.addEventListener("toggle", rec.draw);
    s.addEventListener("click", function () { rec.draw(true); });
    t.calls.forEach(function (c) { callEl(c, body, rec); });
    if (t.answer) answerEl(body, t.answerName || "output", t.answer, null);
    notes.forEach(function (nt) { if (nt.at > firstCall) noteEl(body, nt, r); });
    rec.draw();
  }

  // axis draws the turn's model request and calls as bars on a time axis,
  // so calls that ran at once show side by side, and the background jobs
  // that ran during the turn: from their start, or the turn's if they
  // started before it, to their end, or the turn's if they ran on.
  function axis(parent, t, jobs) {
    var ax = add(parent, el("div", "axis"));
    var span = Math.max(t.dur, 0.001);
    function bar(lbl, at, d, cls) {
      var lane = add(ax, el("div", "lane"));
      var b = add(lane, el("div", "bar " + cls));
      var left = clamp((at - t.at) / span * 100);
      b.style.left = left + "%";
      b.style.width = Math.min(d < 0 ? 0.5 : Math.max(d / span * 100, 0.3), Math.max(100 - left, 0.3)) + "%";
      b.title = lbl;
      add(lane, el("span", "lbl", lbl));
      return b;
    }
    if (t.modelDur >= 0) bar("model " + dur(t.modelDur), t.modelAt, t.modelDur, "model");
    var staged = false;
    t.calls.forEach(function (c) {
      if (!c.timing || c.dur < 0) { bar(c.tool + " " + dur(c.dur), c.at, c.dur, "s-" + c.status); return; }
      staged = true;
      var wait = c.timing.approval + (c.timing.paused || 0);
      var b = bar(c.tool + " " + dur(c.dur) + " · " + (wait > 0 ? "waited " + dur(wait) + " for approval" : "ran " + dur(c.timing.tool)), c.at, c.dur, "staged s-" + c.status);
      b.title = c.tool + " " + dur(c.dur) + " · " + stageText(c);
      b.dataset.call = c.id;
      b.parentNode.classList.add("staged");
      stageSegs(b.parentNode, c, t, span);
    });
    (jobs || []).forEach(function (j) {
      var from = j.turn < t.n, on = j.endTurn > t.n;
      var s = from ? t.at : j.at, e = on ? t.at + t.dur : j.at + j.dur;
      var b = bar("job " + j.id + " " + j.tool + (on ? " running" : " " + j.status) + (from ? " (since turn " + j.turn + ")" : ""),
        s, Math.max(e - s, 0), "job " + (on ? "running" : "s-" + j.status) + (from ? " from" : "") + (on ? " on" : ""));
      b.dataset.job = j.id;
      b.parentNode.classList.add("joblane");
    });
    var ticks = add(parent, el("div", "ticks"));
    add(ticks, el("span", null, "0"));
    add(ticks, el("span", null, dur(t.dur / 2)));
    add(ticks, el("span", null, dur(t.dur)));
    if (staged) legend(parent);
  }

  function callEl(c, parent, turnRec) {
    var box = add(parent, el("div", "call"));
    box.dataset.tool = c.tool; box.dataset.status = c.status; box.dataset.id = c.id;
    if (c.depth > 0) box.classList.add("child");
    if (c.parent) box.classList.add("inner");
    if (c.program) box.classList.add("program");
    if (c.output) box.classList.add("output");
    var rec = { el: box, d: c, turn: turnRec, search: null, kids: [], key: turnRec.key + "/" + c.depth + "/" + c.id };
    calls.push(rec);
    turnRec.calls.push(rec);
    var row = add(box, el("div", "row"));
    add(row, el("span", "badge s-" + c.status, c.status));
    if (c.parent) add(row, el("span", "num", "#" + innerNum(c.id)));
    if (c.output) add(row, el("span", "badge out", "output"));
    add(row, el("span", "tool", (c.depth > 0 || c.parent ? "↳ " : "") + c.tool));
    add(row, el("span", "sum mono", c.program && c.program.code ? firstLine(c.program.code) : summarize(c.args, 160)));
    var flags = add(row, el("span", "flags"));
    if (c.program) add(flags, el("span", "flag prog", "program · " + plural(c.program.calls, "inner call")));
    if (c.parent && c.status === "pending") add(flags, el("span", "flag warn", "waiting for approval"));
    if (c.kind && c.kind !== c.status) add(flags, el("span", "flag warn", c.kind));
    if (c.verdict && c.verdict.decision !== "allow") add(flags, el("span", "flag warn", "guard: " + c.verdict.decision));
    if (c.asked && !(c.parent && c.status === "pending")) add(flags, el("span", "flag", c.approval ? (c.approval.approved ? "approved" : "refused") : "asked"));
    if (c.hooks) add(flags, el("span", "flag", plural(c.hooks.length, "hook")));
    if (c.changes) add(flags, el("span", "flag warn", "arguments changed by " + c.changes.map(function (ch) { return ch.by; }).join(", ")));
    if (c.repair) add(flags, el("span", "flag", "answered by a repair"));
    if (c.truncated) add(flags, el("span", "flag warn", "truncated"));
    if (c.diff) add(flags, el("span", "flag", "diff"));
    if (c.runs) add(flags, el("span", "flag", "sub-agent"));
    if (c.job) add(flags, el("span", "flag", "started job " + c.job));
    add(row, el("span", "dur", dur(c.dur)));
    var detail = null;
    row.tabIndex = 0;
    row.setAttribute("role", "button");
    row.setAttribute("aria-expanded", "false");
    function toggle(open) {
      if (!detail) { detail = details(c); detail.classList.add("gone"); box.insertBefore(detail, row.nextSibling); }
      open = open === undefined ? detail.classList.contains("gone") : open;
      detail.classList.toggle("gone", !open);
      box.classList.toggle("open", open);
      row.setAttribute("aria-expanded", open ? "true" : "false");
    }
    rec.toggle = toggle;
    rec.isOpen = function () { return box.classList.contains("open"); };
    row.addEventListener("click", function () { toggle(); });
    row.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); }
    });
    if (c.output) answerEl(box, null, c.args);
    if (c.program) programEl(c, box, rec, turnRec);
    if (c.runs) {
      var kids = add(box, el("div", "children"));
      var before = calls.length;
      c.runs.forEach(function (r) { childRun(r, kids, turnRec); });
      for (var i = before; i < calls.length; i++) rec.kids.push(calls[i]);
    }
    return box;
  }

  // --- programs (code mode) --------------------------------------------------
  function innerNum(id) { return id.slice(id.lastIndexOf("/") + 1); }
  function firstLine(t) {
    var lines = str(t).split("\n");
    for (var i = 0; i < lines.length; i++) if (lines[i].trim()) return summarize({ s: lines[i] }, 160);
    return "";
  }
  // maxOpenLines: a program's source shows open when it has at most this
  // many lines; a longer one opens on a click.
  var maxOpenLines = 40;

  // programEl shows what a call's program did, under its row: its source
  // (collapsible, numbered), its inner calls as call rows of their own, in
  // order, and its output (the call's result: the program's return value,
  // then its console output) or its error.
  function programEl(c, box, rec, turnRec) {
    var pg = c.program;
    if (pg.code) {
      var src = add(box, el("details", "prog src"));
      src.open = pg.lines <= maxOpenLines;
      add(src, el("summary", null, "Program · " + plural(pg.lines, "line")));
      codeEl(src, pg.code);
    }
    var inner = add(box, el("div", "inner-calls"));
    var head = plural(pg.calls, "inner call");
    if (c.inner && c.inner.length !== pg.calls) head += " (" + c.inner.length + " in the log)";
    if (pg.paused) {
      var waiting = (c.inner || []).filter(function (ic) { return ic.asked || ic.status === "pending"; }).map(function (ic) { return ic.id; });
      head += " · paused for approval" + (waiting.length ? " of " + waiting.join(", ") : "") +
        (c.status === "pending" ? "" : "; ran again on resume, " + plural(pg.served, "inner call") + " answered from its journal");
    }
    add(inner, el("div", "inner-head", head));
    var before = calls.length;
    (c.inner || []).forEach(function (ic) { callEl(ic, inner, turnRec); });
    for (var i = before; i < calls.length; i++) rec.kids.push(calls[i]);
    var out = add(box, el("div", "prog out"));
    if (c.message) block(out, "Error" + (c.kind ? " (" + c.kind + ")" : ""), c.message, "err");
    if (c.result) block(out, resultTitle(c, "Output"), c.result);
    else if (!c.message) add(out, el("div", "dim", c.status === "ok" ? "no output" : "no output in the log: the program " +
      (c.status === "pending" ? "waits for approval" : "did not finish")));
  }

  function resultTitle(c, title) {
    return title + (c.truncated ? " (truncated by the loop: " + num(c.bytes) + " bytes before)" : "");
  }

  // codeEl shows a program's source as numbered lines (the numbers are
  // the style's, so copying the code copies the code alone).
  function codeEl(parent, t) {
    var pre = add(parent, el("pre", "code"));
    t.s.split("\n").forEach(function (line) { add(pre, el("span", "ln", line)); });
    if (t.more) add(pre, el("span", "cut", "… " + num(t.more) + " more bytes not shown (display bound " + num(D.bound) + " bytes)"));
    return pre;
  }

  // childRun shows a sub-agent's run under the call that started it; its
  // calls filter with the page's.
  function childRun(r, parent, turnRec) {
    add(parent, el("div", "child-head", "↳ sub-agent run " + r.id + " · " + dur(r.dur) + " · " + plural(r.turns.length, "turn") +
      (r.acct ? " · " + usage(r.acct.usage) : "")));
    (r.notes || []).forEach(function (nt) { noteEl(parent, nt, r); });
    if (r.jobs) jobsEl(r, parent);
    r.turns.forEach(function (t) {
      if (t.request) requestEl(parent, t.request, false);
      if (t.text) add(parent, el("div", "text dim", "turn " + t.n + ": " + summarize(t.text, 200)));
      (t.notes || []).forEach(function (nt) { noteEl(parent, nt, r); });
      t.calls.forEach(function (c) { callEl(c, parent, turnRec); });
    });
  }

  // changeTitle says who changed a call's arguments, and why.
  function changeTitle(ch) {
    var who = {
      guard: "guard" + (ch.name ? " (rule " + ch.name + ")" : ""),
      hook: "hook " + (ch.name || ""),
      person: "person, when approving the call (edited)",
      processor: "turn processor, before the call started",
      repairer: "argument repairer"
    }[ch.by] || ch.by;
    return "by " + who + (ch.reason ? ": " + ch.reason.s : "");
  }

  // details builds a call's full view when it is first opened.
  function details(c) {
    var d = el("div", "detail");
    var kv = add(d, el("table", "kv"));
    function row(k, v) { var tr = add(kv, el("tr")); add(tr, el("td", null, k)); add(tr, el("td", "mono", v)); }
    row("call", c.id);
    if (c.parent) row("inner call", "#" + innerNum(c.id) + " of the program of call " + c.parent);
    if (c.source) row("source", c.source);
    row("status", c.status + (c.kind && c.kind !== c.status ? " (" + c.kind + ")" : ""));
    row("duration", dur(c.dur));
    if (c.timing) row("time", stageText(c));
    if (c.output) row("output", "the call gave the run's typed answer (the output tool's arguments)");
    if (c.bytes) row("result size", num(c.bytes) + " bytes" + (c.truncated ? ", truncated by the loop" : ""));
    if (c.cleared) row("cleared", "a context manager later replaced this result with a stub");
    if (c.synthesized) row("synthesized", "the call did not run; a turn processor answered it");
    if (c.repair) row("repaired", c.repair.s);
    if (c.progress) row("progress reports", String(c.progress));
    if (c.partial) row("partial outputs", String(c.partial));
    if (c.program) {
      row("inner calls", String(c.program.calls));
      if (c.program.paused) row("paused", "an inner call waited for approval; " + plural(c.program.served, "inner call") + " answered before the pause");
    }
    if (c.program && c.program.code) add(d, el("div", "dim", "Arguments: the program above"));
    else block(d, c.original ? "Arguments it ran with" : "Arguments", c.args);
    block(d, "Original arguments (the model's)", c.original);
    if (c.changes) {
      add(d, el("h4", null, "Changes to the arguments"));
      c.changes.forEach(function (ch) { block(d, changeTitle(ch), ch.args); });
    }
    if (c.verdict) {
      add(d, el("h4", null, "Guard verdict"));
      add(d, el("div", null, c.verdict.decision + (c.verdict.rule ? " by rule " + c.verdict.rule : "") +
        (c.verdict.reason ? ": " + c.verdict.reason.s : "")));
      block(d, "Rewritten arguments", c.verdict.arguments);
    }
    if (c.asked || c.approval) {
      add(d, el("h4", null, "Approval"));
      add(d, el("div", null, c.approval ? (c.approval.approved ? "approved" : "refused") +
        (c.approval.reason ? ": " + c.approval.reason : "") : "asked; no answer in the log"));
      if (c.approval && c.approval.edited) add(d, el("div", "dim", "with arguments the person edited (see the changes above)"));
    }
    if (c.hooks) {
      add(d, el("h4", null, "Hook effects"));
      c.hooks.forEach(function (h) {
        add(d, el("div", "mono", h.hook + "[" + h.index + "] " + h.effect + (h.detail ? ": " + h.detail : "")));
      });
    }
    if (!c.program) { // a program's output and error show under its inner calls
      if (c.message) block(d, "Error" + (c.kind ? " (" + c.kind + ")" : ""), c.message, "err");
      if (c.result) block(d, resultTitle(c, "Result"), c.result);
      else if (c.status === "ok") add(d, el("div", "dim", "empty result"));
      (c.notes || []).forEach(function (nt) { block(d, "Note the loop added to the result", nt, "note-text"); });
    }
    if (c.diff) {
      c.diff.forEach(function (f) {
        add(d, el("h4", null, "Diff: " + f.path + (f.note ? " (" + f.note + ")" : "")));
        var pre = add(d, el("pre", "diff"));
        f.lines.forEach(function (l) {
          var k = l.charAt(0), cls = { "+": "a", "-": "d", "@": "at", "h": "h", "…": "h" }[k] || "";
          add(pre, el("div", cls, k === "@" || k === "h" || k === "…" ? l.slice(1) : l));
        });
      });
    }
    if (c.extra) block(d, "Extra", c.extra);
    if (c.stack) block(d, "Stack", c.stack);
    return d;
  }

  // --- requests, stages, answers ---------------------------------------------
  function tokensText(q) {
    if (!q.window) return "~" + num(q.tokens) + " tokens";
    var pct = q.tokens * 100 / q.window;
    return "tokens ~" + num(q.tokens) + " of window " + num(q.window) + " (" + (pct < 1 ? pct.toFixed(1) : Math.round(pct)) + "%)";
  }
  function toolsText(q) {
    return q.sameTools ? plural(q.toolCount, "tool") + " (same as previous turn)" : plural(q.toolCount, "tool");
  }
  function requestSummary(q) {
    var n = (q.messages || []).length + (q.left || 0);
    var bits = ["request: " + plural(n, "new message") + " (" + q.count + " in all)", toolsText(q)];
    if (q.loaded) bits.push(q.loaded.length + " loaded by search");
    if (q.choice) bits.push("tool choice " + q.choice);
    if (q.output) bits.push("output " + q.output);
    bits.push(tokensText(q));
    if (q.again) bits.push("sent " + (q.again + 1) + " times");
    return bits.join(" · ");
  }
  var ROLES = { system: "system", user: "user", assistant: "assistant (the model's turn)", tool: "tool result" };
  function roleLabel(m, i) {
    var s = "#" + i + " " + (ROLES[m.role] || m.role);
    if (m.role === "tool") s += (m.tool ? " of " + m.tool : "") + (m.callId ? " (" + m.callId + ")" : "") + (m.error ? " · error" : "") + ", as the model saw it";
    return s;
  }

  // requestEl shows what the model was sent for a turn: a line that sums
  // it up, which opens to the new messages and the tools. The body is
  // built when it is first opened; a run's first request shows open.
  function requestEl(parent, q, open) {
    var det = add(parent, el("details", "req"));
    var sum = add(det, el("summary", null, requestSummary(q)));
    var built = false;
    function build() { if (!built) { built = true; requestBody(det, q); } }
    sum.addEventListener("click", build); // before it opens: its body is there at once
    det.addEventListener("toggle", function () { if (det.open) build(); });
    var rec = { el: det, show: function () { build(); det.open = true; } };
    if (open) rec.show();
    return rec;
  }
  function requestBody(det, q) {
    var d = add(det, el("div", "req-body"));
    var kv = add(d, el("table", "kv"));
    function row(k, v) { var tr = add(kv, el("tr")); add(tr, el("td", null, k)); add(tr, el("td", "mono", v)); }
    row("messages", q.count + " in the request" + (q.from ? "; the first " + q.from + " as in the previous request, the rest below" : ", all below"));
    row("tools", toolsText(q));
    if (q.choice) row("tool choice", q.choice);
    if (q.output) row("output format", q.output);
    row("tokens", tokensText(q).replace(/^tokens /, ""));
    if (q.tools) {
      var loaded = {};
      (q.loaded || []).forEach(function (n) { loaded[n] = true; });
      var tl = add(d, el("div", "tools"));
      q.tools.forEach(function (n) {
        var t = add(tl, el("span", "toolname" + (loaded[n] ? " loaded" : ""), n + (loaded[n] ? " (loaded by search)" : "")));
        t.dataset.tool = n;
      });
    }
    (q.messages || []).forEach(function (m, i) { msgEl(d, m, q.from + i); });
    if (q.left) add(d, el("div", "dim", plural(q.left, "more message") + " not listed"));
  }

  function msgEl(parent, m, i) {
    var md = add(parent, el("div", "msg"));
    md.dataset.role = m.role;
    add(md, el("div", "role", roleLabel(m, i)));
    if (m.calls) add(md, el("div", "dim", "asked for " + m.calls.join(", ")));
    block(md, null, m.text, m.error ? "err" : null);
    return md;
  }

  // answerEl shows a typed answer: the output tool's arguments, or the
  // text of a turn that answered a native output format.
  function answerEl(parent, name, t) {
    var d = add(parent, el("div", "answer"));
    if (name) {
      var h = add(d, el("div", "row"));
      add(h, el("span", "badge out", "output"));
      add(h, el("span", "tool", name));
      add(h, el("span", "dim", "the run's typed answer"));
    }
    block(d, null, t, "json");
    return d;
  }

  var STAGES = [["queue", "queued"], ["wait", "paused for approval"], ["checks", "checks (guard)"], ["approval", "approval"],
    ["preHooks", "pre-hooks"], ["tool", "tool"], ["after", "after (post-hooks, truncation)"]];
  var STAGE_NAME = {};
  STAGES.forEach(function (s) { STAGE_NAME[s[0]] = s[1]; });

  // stageText says where a call's time went: "ran 12 ms, waited 4.2 s
  // for approval, …".
  function stageText(c) {
    var tm = c.timing, bits = ["ran " + dur(tm.tool)];
    var wait = tm.approval + (tm.paused || 0);
    if (wait > 0) bits.push("waited " + dur(wait) + " for approval");
    if (tm.checks > 0) bits.push("checks " + dur(tm.checks));
    if (tm.preHooks > 0) bits.push("pre-hooks " + dur(tm.preHooks));
    if (tm.after > 0) bits.push("after " + dur(tm.after));
    if (tm.queue >= 0) bits.push("queued " + dur(tm.queue));
    return bits.join(", ");
  }
  function spentText(sp) {
    var bits = ["model " + dur(sp.model), "tools " + dur(sp.tools)];
    if (sp.approval > 0) bits.push("approval " + dur(sp.approval));
    bits.push("other " + dur(sp.other));
    return bits.join(" · ");
  }

  // stageSegs draws a call's stages in its lane, over its bar: the queue
  // before it, then a pause for approval if it had one, then its stages
  // in order, ending with the call.
  function stageSegs(lane, c, t, span) {
    var tm = c.timing, segs = [];
    if (tm.queue > 0) segs.push(["queue", Math.min(c.at, tm.start) - tm.queue, tm.queue]);
    if (tm.paused) segs.push(["wait", c.at, tm.paused]);
    var at = tm.start;
    ["checks", "approval", "preHooks", "tool", "after"].forEach(function (k) {
      if (tm[k] > 0) segs.push([k, at, tm[k]]);
      at += tm[k];
    });
    segs.forEach(function (g) {
      var d = add(lane, el("div", "stage st-" + g[0]));
      d.dataset.stage = g[0];
      var left = clamp((g[1] - t.at) / span * 100);
      d.style.left = left + "%";
      d.style.width = Math.min(Math.max(g[2] / span * 100, 0.15), Math.max(100 - left, 0)) + "%";
      d.title = STAGE_NAME[g[0]] + " " + dur(g[2]);
    });
  }
  function legend(parent) {
    var lg = add(parent, el("div", "legend"));
    STAGES.forEach(function (s) {
      var it = add(lg, el("span", "item"));
      it.dataset.stage = s[0];
      add(it, el("span", "sw st-" + s[0]));
      add(it, document.createTextNode(s[1]));
    });
  }

  // chart draws the tokens and cost of each turn of the top-level runs as
  // a small SVG in the header: a bar per turn (input below, output above)
  // and a line of cost. Past 300 turns, each bar sums several.
  function chart() {
    var box = document.getElementById("chart");
    box.textContent = "";
    var ts = [];
    D.runs.forEach(function (r) { [r].concat(r.parts || []).forEach(function (p) { p.turns.forEach(function (t) { ts.push(t); }); }); });
    if (!ts.some(function (t) { return t.usage && (t.usage.input_tokens || t.usage.output_tokens); })) return;
    var per = Math.ceil(ts.length / 300), cols = [];
    for (var i = 0; i < ts.length; i += per) {
      var b = { first: ts[i].n, last: ts[i].n, in: 0, out: 0, cost: 0, priced: false };
      ts.slice(i, i + per).forEach(function (t) {
        b.last = t.n;
        if (t.usage) { b.in += t.usage.input_tokens || 0; b.out += t.usage.output_tokens || 0; }
        if (t.cost !== undefined && t.cost !== null) { b.cost += t.cost; b.priced = true; }
      });
      cols.push(b);
    }
    var W = Math.min(480, cols.length * 16), H = 40, w = W / cols.length;
    var maxTok = Math.max.apply(null, cols.map(function (b) { return b.in + b.out; })) || 1;
    var maxCost = Math.max.apply(null, cols.map(function (b) { return b.cost; }));
    function svg(tag, attrs, parent) {
      var e = document.createElementNS(SVG, tag);
      for (var k in attrs) e.setAttribute(k, String(attrs[k]));
      if (parent) parent.appendChild(e);
      return e;
    }
    var root = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", "class": "chart" }, box);
    svg("title", {}, root).textContent = "tokens and cost per turn";
    var pts = [];
    cols.forEach(function (b, i) {
      var x = i * w, hi = b.in / maxTok * H, ho = b.out / maxTok * H;
      var g = svg("g", { "class": "col" }, root);
      svg("title", {}, g).textContent = (b.first === b.last ? "turn " + b.first : "turns " + b.first + "–" + b.last) +
        ": in " + num(b.in) + " · out " + num(b.out) + (b.priced ? " · " + money(b.cost) : "");
      svg("rect", { x: x, y: H - hi, width: Math.max(w - 1, 0.5), height: hi, "class": "tin" }, g);
      svg("rect", { x: x, y: H - hi - ho, width: Math.max(w - 1, 0.5), height: ho, "class": "tout" }, g);
      if (maxCost > 0) pts.push((x + w / 2).toFixed(1) + "," + (H - b.cost / maxCost * (H - 2) - 1).toFixed(1));
    });
    if (pts.length > 1) svg("polyline", { points: pts.join(" "), "class": "cost" }, root);
    var lg = add(box, el("span", "dim chart-legend", "tokens per turn (max " + num(maxTok) + "; input, output)" + (maxCost > 0 ? " · cost (max " + money(maxCost) + ")" : "")));
    lg.dataset.turns = String(ts.length);
  }

  // --- filtering --------------------------------------------------------------
  function searchText(c) {
    if (c.search === null) {
      var d = c.d, parts = [d.tool, d.id, d.status, d.kind, str(d.args), str(d.repaired), str(d.result), str(d.message), str(d.original), str(d.repair)];
      (d.notes || []).forEach(function (nt) { parts.push(str(nt)); });
      (d.changes || []).forEach(function (ch) { parts.push(ch.by, ch.name, str(ch.reason)); });
      if (d.verdict) parts.push(d.verdict.decision, d.verdict.rule, str(d.verdict.reason));
      (d.hooks || []).forEach(function (h) { parts.push(h.hook, h.effect, h.detail); });
      c.search = parts.join("\n").toLowerCase();
    }
    return c.search;
  }
  function matches(c) {
    if (state.tool && c.d.tool !== state.tool) return false;
    if (anyStatus() && !state.status[c.d.status]) return false;
    return !state.q || searchText(c).indexOf(state.q) >= 0;
  }
  // requestText is the text of the messages of a turn's request, for the
  // search, made when first searched.
  function requestText(t) {
    if (t.reqText === undefined) {
      var q = t.d.request;
      t.reqText = q ? (q.messages || []).map(function (m) { return str(m.text); }).join("\n").toLowerCase() : "";
    }
    return t.reqText;
  }
  function anyStatus() { for (var k in state.status) if (state.status[k]) return true; return false; }

  // apply shows the calls that match the search and filters, the turns
  // that hold them open, and hides the rest.
  function apply() {
    var active = !!(state.q || state.tool || anyStatus());
    var shown = 0;
    // A call is on when it matches; a call that does not match stays as a
    // container (row hidden) if one of its sub-agent's calls matches.
    for (var i = calls.length - 1; i >= 0; i--) {
      var c = calls[i];
      c.on = !active || matches(c);
      var kid = false;
      for (var j = 0; j < c.kids.length; j++) if (c.kids[j].on || c.kids[j].inner) { kid = true; break; }
      c.inner = kid;
      c.el.classList.toggle("off", !c.on);
      c.el.classList.toggle("gone", !c.on && !kid);
      if (c.on) shown++;
    }
    turns.forEach(function (t) {
      var any = t.calls.some(function (c) { return c.on; });
      var textHit = !!state.q && !state.tool && !anyStatus() && (t.text.indexOf(state.q) >= 0 || requestText(t).indexOf(state.q) >= 0);
      t.el.classList.toggle("gone", active && !any && !textHit);
      t.el.open = active ? (any || textHit) : t.defaultOpen;
    });
    document.getElementById("shown").textContent = active ? "showing " + shown + " of " + plural(calls.length, "call") : plural(calls.length, "call");
    document.body.dataset.shown = String(shown);
  }

  function controls() {
    var q = document.getElementById("search");
    q.addEventListener("input", function () { state.q = q.value.trim().toLowerCase(); apply(); });
    var sel = document.getElementById("tool");
    sel.addEventListener("change", function () { state.tool = sel.value; apply(); });
    document.getElementById("expand").addEventListener("click", function () {
      turns.forEach(function (t) { if (!t.el.classList.contains("gone")) t.el.open = true; });
      calls.forEach(function (c) { if (!c.el.classList.contains("gone") && !c.el.classList.contains("off")) c.toggle(true); });
    });
    document.getElementById("collapse").addEventListener("click", function () {
      turns.forEach(function (t) { t.el.open = false; });
      calls.forEach(function (c) { if (c.isOpen()) c.toggle(false); });
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "/" && document.activeElement !== q) { e.preventDefault(); q.focus(); }
    });
  }

  var bound = false;
  function render() {
    var started = performance.now();
    calls = []; turns = []; jobShow = {}; jobOpen = {};
    var main = document.getElementById("timeline");
    main.textContent = "";
    // Built apart from the document, and put in it at once.
    var frag = document.createDocumentFragment();
    D.runs.forEach(function (r) { runEl(r, frag, 0); });
    main.appendChild(frag);
    header();
    chart();
    if (!bound) { controls(); bound = true; }
    apply();
    window.toolloopView = { calls: calls.length, turns: turns.length, started: started, ready: performance.now(), apply: apply, state: state, update: update };
    document.body.dataset.ready = "1";
  }

  // update replaces the page's data with data (the shape of the embedded
  // JSON) and builds the page again in place, keeping which turns, calls
  // and requests are open, the search, the filters and the scroll
  // position: a live page calls it with each new state of the run.
  function update(data) {
    var keep = { turns: {}, calls: {}, x: window.scrollX, y: window.scrollY };
    turns.forEach(function (t) {
      keep.turns[t.key] = { open: t.el.open, def: t.defaultOpen, req: !!(t.req && t.req.el.open) };
    });
    calls.forEach(function (c) { if (c.isOpen()) keep.calls[c.key] = true; });
    keep.jobs = [].map.call(document.querySelectorAll(".job.open"), function (j) { return j.id; });
    D = data;
    render();
    turns.forEach(function (t) {
      var k = keep.turns[t.key];
      if (!k) return;
      t.defaultOpen = k.def;
      if (!filtering()) t.el.open = k.open;
      if (k.req) { t.draw(true); t.req.show(); }
    });
    if (filtering()) apply();
    calls.forEach(function (c) { if (keep.calls[c.key]) c.toggle(true); });
    keep.jobs.forEach(function (id) { if (jobOpen[id]) jobOpen[id](true); });
    window.scrollTo(keep.x, keep.y);
    window.toolloopView.updated = performance.now();
  }
  function filtering() { return !!(state.q || state.tool || anyStatus()); }
  // start renders the page; a failure is marked on the body (and still
  // thrown, to the console), so that a test waiting for the page sees it.
  function start() {
    try { render(); } catch (e) { document.body.dataset.error = String(e); throw e; }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
