// Live updates for causalctl's pages, without a framework: every few
// seconds the page asks the server for itself again and swaps in the new
// <main>. The server renders the one HTML (escaped by html/template); this
// script only moves its nodes, never builds markup from data, so the page
// works the same without it and nothing here can inject a broker's string.
"use strict";
(function () {
  var every = parseInt(document.body.dataset.refresh, 10) || 5000;
  var live = document.getElementById("live");
  var busy = false;
  function swap(doc) {
    var fresh = doc.getElementById("main");
    var main = document.getElementById("main");
    if (!fresh || !main) return;
    var focused = document.activeElement && document.activeElement.id;
    main.replaceChildren.apply(main, Array.prototype.slice.call(fresh.childNodes).map(function (n) { return document.importNode(n, true); }));
    var at = doc.getElementById("read-at"), mine = document.getElementById("read-at");
    if (at && mine) { mine.replaceWith(document.importNode(at, true)); }
    if (focused) { var el = document.getElementById(focused); if (el) el.focus(); }
    document.title = doc.title;
  }
  function tick() {
    // A form being typed in is not replaced under the user's hands.
    var a = document.activeElement;
    if (busy || document.hidden || (a && (a.tagName === "INPUT" || a.tagName === "SELECT"))) return;
    busy = true;
    fetch(location.href, { headers: { Accept: "text/html" }, credentials: "same-origin", cache: "no-store" })
      .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
      .then(function (text) {
        swap(new DOMParser().parseFromString(text, "text/html"));
        if (live) live.textContent = " · live";
      })
      .catch(function () { if (live) live.textContent = " · updates paused (server unreachable)"; })
      .finally(function () { busy = false; });
  }
  if (live) live.textContent = " · live";
  setInterval(tick, every);
})();
