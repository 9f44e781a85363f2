"use strict";
// The live part of the viewer's script, added after page.js only on a page
// a server keeps up to date (Options.Live: toolloop view -serve, toolloop
// run -view). It long-polls the server for the page's data: each answer
// with data goes to the page's update, which rebuilds the page in place,
// and names the URL to ask next; an answer that names none means the
// server stopped following the log. #live says which, as text.
(function () {
  var first = document.body.dataset.live;
  if (!first) return;
  var badge = document.createElement("span");
  badge.id = "live";
  var retry = 0;

  function show(state, text) {
    badge.dataset.state = state;
    badge.textContent = text;
  }
  // apply hands the data to the page. A page without update (an older
  // page.js) is loaded again instead, which shows the same data.
  function apply(data) {
    var v = window.toolloopView;
    if (!v || typeof v.update !== "function") {
      location.reload();
      return false;
    }
    try {
      v.update(data);
    } catch (e) {
      // The page could not take the data: say so, and go on following,
      // as the next data may do.
      document.body.dataset.liveError = String(e);
      console.error("toolloop live: updating the page:", e);
    }
    return true;
  }
  function poll(url) {
    fetch(url, { cache: "no-store", credentials: "same-origin" }).then(function (r) {
      if (r.status !== 200 && r.status !== 204) throw new Error("the server answered " + r.status);
      var next = r.headers.get("Toolloop-Next");
      return (r.status === 200 ? r.json() : Promise.resolve(null)).then(function (data) {
        return { data: data, next: next };
      });
    }).then(function (a) {
      retry = 0;
      if (a.data !== null && !apply(a.data)) return;
      if (a.next) {
        show("following", "live: following the log");
        poll(a.next);
      } else {
        show("ended", "live: ended, the server follows the log no more");
      }
    }, function () {
      // The server is gone or restarting: ask again, less and less often.
      retry = Math.min(retry ? retry * 2 : 500, 8000);
      show("lost", "live: connection lost, retrying");
      setTimeout(function () { poll(url); }, retry);
    });
  }
  function start() {
    var title = document.getElementById("title");
    title.parentNode.insertBefore(badge, title.nextSibling);
    show("following", "live: following the log");
    poll(first);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
