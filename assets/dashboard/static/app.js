// Gatehouse dashboard: the live stream. Every value shown is set with
// textContent, never parsed as HTML.
"use strict";

(function () {
  const page = document.body.dataset.page;
  const live = document.getElementById("live");
  if (!live) {
    return; // not signed in
  }
  const table = document.getElementById("executions");

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) {
      td.className = cls;
    }
    tr.appendChild(td);
    return td;
  }

  function rowOf(r) {
    const tr = document.createElement("tr");
    tr.className = r.class + " new";
    tr.dataset.cursor = r.cursor;
    tr.dataset.id = r.id;
    cell(tr, r.glyph, "glyph").title = r.status;
    cell(tr, r.time, "time");
    cell(tr, r.agent);
    const cmd = cell(tr, "", "cmd");
    const a = document.createElement("a");
    a.href = "/executions/" + encodeURIComponent(r.id);
    a.textContent = r.command;
    cmd.appendChild(a);
    cell(tr, r.exit);
    cell(tr, r.duration);
    cell(tr, r.mode);
    cell(tr, String(r.redactions));
    return tr;
  }

  let fetching = false;
  let again = false;

  // newer adds the rows newer than the top one, under the page's filters.
  async function newer() {
    if (fetching) {
      again = true;
      return;
    }
    fetching = true;
    try {
      do {
        again = false;
        const body = table.tBodies[0];
        const top = body.querySelector("tr[data-cursor]");
        const q = new URLSearchParams(window.location.search);
        q.delete("before");
        if (top) {
          q.set("after", top.dataset.cursor);
        }
        const resp = await fetch("/executions/rows?" + q.toString(), { credentials: "same-origin" });
        if (!resp.ok) {
          break;
        }
        const data = await resp.json();
        const empty = body.querySelector("tr.empty");
        if (empty && data.rows.length > 0) {
          empty.remove();
        }
        for (let i = data.rows.length - 1; i >= 0; i--) {
          const r = data.rows[i];
          // A routed call is one row: its execution takes its decision's.
          if (r.decision) {
            for (const old of body.querySelectorAll("tr[data-id]")) {
              if (old.dataset.id === r.decision) {
                old.remove();
              }
            }
          }
          body.insertBefore(rowOf(r), body.firstChild);
        }
        while (body.rows.length > 50) {
          body.deleteRow(body.rows.length - 1);
        }
      } while (again);
    } finally {
      fetching = false;
    }
  }

  // A form on its way out is not to be cut short by a reload.
  let submitting = false;
  document.addEventListener("submit", function () {
    submitting = true;
  });

  // editing says whether the person is in the middle of an answer.
  function editing() {
    const el = document.activeElement;
    return submitting || el && (el.tagName === "TEXTAREA" || el.tagName === "INPUT");
  }

  // An egress request's entry picked for Always and Deny always: every
  // place that names what they save names the pick.
  document.addEventListener("change", function (ev) {
    const el = ev.target;
    if (el.name !== "entry" || !el.checked) {
      return;
    }
    const section = el.closest("section.approval");
    for (const p of section ? section.querySelectorAll(".pick") : []) {
      p.textContent = el.value;
    }
  });

  // The Sessions page reloads when the service's list is no longer the
  // one it shows (GET /sessions/state says): at once on a forward opened
  // or closed and on an execution's start or end, and every few seconds
  // while it is open, since a server starts listening in an execution
  // that runs on and no notice says so.
  const sessions = document.getElementById("sessions");
  let checking = false;
  async function sessionsChanged() {
    if (page !== "sessions" || !sessions || checking || submitting) {
      return;
    }
    checking = true;
    try {
      const resp = await fetch("/sessions/state", { credentials: "same-origin" });
      if (resp.ok) {
        const data = await resp.json();
        if (data.state !== sessions.dataset.state && !submitting) {
          window.location.reload();
        }
      }
    } catch (e) {
      // The live stream says when the service is back.
    } finally {
      checking = false;
    }
  }
  if (page === "sessions" && sessions) {
    window.setInterval(sessionsChanged, 3000);
  }

  function connect() {
    const es = new EventSource("/stream");
    es.onopen = function () {
      live.textContent = "live";
      live.classList.add("on");
    };
    es.onerror = function () {
      live.textContent = "reconnecting";
      live.classList.remove("on");
    };
    es.addEventListener("execution.ended", function () {
      if (page === "executions" && table && table.dataset.live) {
        newer();
      }
    });
    for (const type of ["ports.changed", "execution.started", "execution.ended"]) {
      es.addEventListener(type, sessionsChanged);
    }
    // The approvals page reloads when the requests it shows are no longer
    // the pending ones (an opened one it lacks, an answered one it
    // shows), unless the person is typing.
    const approvals = function (shouldShow) {
      return function (ev) {
        if (page !== "approvals" || editing()) {
          return;
        }
        let id = "";
        try {
          id = JSON.parse(ev.data).approval.id;
        } catch (e) {
          return;
        }
        if (Boolean(document.getElementById("approval-" + id)) !== shouldShow) {
          window.location.reload();
        }
      };
    };
    es.addEventListener("approval.opened", approvals(true));
    es.addEventListener("approval.answered", approvals(false));
  }
  connect();
})();
