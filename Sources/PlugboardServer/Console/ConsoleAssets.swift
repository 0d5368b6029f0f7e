/// The console's one stylesheet and one script, served by the binary itself (nothing from elsewhere, no build step).
enum ConsoleAssets {
    /// Readable on a laptop and at a phone's width; colours with at least 4.5:1 contrast; focus always visible.
    static let css = """
        :root { --ink: #1b1f24; --muted: #4a5560; --line: #c9d1d9; --back: #ffffff; --band: #f2f4f7;
          --accent: #0b5cad; --bad: #a4161a; --ok: #1d6b32; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
        * { box-sizing: border-box; }
        body { margin: 0; color: var(--ink); background: var(--back); line-height: 1.45; }
        a { color: var(--accent); }
        a:focus, button:focus, input:focus, select:focus, summary:focus { outline: 3px solid #f0a500; outline-offset: 2px; }
        .skip { position: absolute; left: -10000px; }
        .skip:focus { left: 1rem; top: 1rem; background: var(--back); padding: .5rem; z-index: 2; }
        header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .6rem 1rem;
          background: var(--band); border-bottom: 1px solid var(--line); }
        .brand { margin: 0; font-weight: 700; }
        .brand a { color: var(--ink); text-decoration: none; }
        nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
        nav a[aria-current="page"] { font-weight: 700; color: var(--ink); }
        .who { margin-left: auto; display: flex; gap: .75rem; align-items: center; }
        .who form { margin: 0; }
        main { padding: 1rem; max-width: 80rem; }
        h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
        h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
        .id { color: var(--muted); font-weight: 400; font-size: .9em; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-size: .95rem; }
        th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { background: var(--band); }
        pre { white-space: pre-wrap; word-break: break-all; font-size: .85rem; margin: .25rem 0; }
        .bad { color: var(--bad); }
        .ok { color: var(--ok); }
        .state-loaded { color: var(--ok); }
        .state-failed, .state-deactivated, .state-quarantined, .state-crashed { color: var(--bad); }
        .flash { padding: .5rem .75rem; border-left: 4px solid var(--ok); background: #eef7f0; }
        .flash.failed { border-color: var(--bad); background: #fbeeee; }
        form.filters, form.op, form.stack { display: flex; flex-wrap: wrap; gap: .4rem .6rem; align-items: center; margin: .5rem 0; }
        form.stack { flex-direction: column; align-items: flex-start; max-width: 30rem; }
        form.stack input { width: 100%; }
        .controls { display: flex; flex-direction: column; gap: .25rem; margin: .5rem 0 1rem; padding: .5rem .75rem;
          border: 1px solid var(--line); border-radius: 4px; }
        input, select, button { font: inherit; padding: .3rem .5rem; border: 1px solid var(--muted); border-radius: 3px; }
        button { background: var(--accent); color: #ffffff; border-color: var(--accent); cursor: pointer; }
        form.danger button { background: var(--bad); border-color: var(--bad); }
        .who button { background: var(--back); color: var(--accent); }
        label.check { display: inline-flex; gap: .3rem; align-items: center; }
        article.change { border: 1px solid var(--line); border-radius: 4px; padding: .25rem .75rem .5rem; margin: .75rem 0; }
        table.diff { margin: .25rem 0; }
        table.diff caption { text-align: left; font-weight: 600; padding: .25rem 0; }
        del { background: #fbeeee; color: var(--ink); }
        ins { background: #eef7f0; color: var(--ink); text-decoration: none; font-weight: 600; }
        .same { color: var(--muted); font-size: .9rem; }
        ul.inline { display: flex; flex-wrap: wrap; gap: .5rem 1rem; list-style: none; padding: 0; }
        @media (max-width: 40rem) { main { padding: .6rem; } th, td { padding: .3rem; } .who { margin-left: 0; } }
        """

    /// Live pages: the server's change stream for the console (`/ui/events`) says when the board or a host's report
    /// changed, and the page's content is fetched again and swapped in, unless someone is typing in it.
    static let js = """
        "use strict";
        (function () {
          var main = document.getElementById("main");
          if (!main || main.dataset.live !== "true" || !window.EventSource) { return; }
          var busy = false, again = false;
          function typing() {
            var active = document.activeElement;
            return active && main.contains(active) && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName) && active.value !== "";
          }
          function refresh() {
            if (busy) { again = true; return; }
            if (typing()) { return; }
            busy = true;
            fetch(window.location.href, { credentials: "same-origin", headers: { "X-Plugboard-Console": "refresh" } })
              .then(function (response) { return response.ok ? response.text() : null; })
              .then(function (text) {
                if (text === null) { return; }
                var next = new DOMParser().parseFromString(text, "text/html").getElementById("main");
                if (!next || typing()) { return; }
                var flash = main.querySelector(".flash");
                main.innerHTML = next.innerHTML;
                if (flash && !main.querySelector(".flash")) { main.insertBefore(flash, main.firstChild); }
                main.dataset.updated = String(Date.now());
              })
              .catch(function () {})
              .then(function () { busy = false; if (again) { again = false; refresh(); } });
          }
          // A page kept in the back/forward cache would keep its stream open, and a browser's few connections per
          // server with it: the stream closes when the page is left and opens again when it is shown from that cache.
          var events = null;
          function listen() {
            events = new EventSource("/ui/events");
            events.addEventListener("change", refresh);
          }
          window.addEventListener("pagehide", function () { if (events) { events.close(); events = null; } });
          window.addEventListener("pageshow", function (event) { if (event.persisted && !events) { listen(); refresh(); } });
          listen();
        })();
        """
}
