// zkcoord console: renders the views the server pushes over server-sent
// events. No framework, no build step.
"use strict";

const views = new Map(); // path → view
let admin = false;
// The admin key comes in the fragment of the URL the console printed; the
// console never serves it.
const adminKey = new URLSearchParams(location.hash.slice(1)).get("key") || "";
const maxTimeline = 500;

const sectionOf = { group: "group", election: "election", lock: "lock", rwlock: "lock",
  semaphore: "lock", queue: "queue", barrier: "barrier", "double-barrier": "barrier", counter: "counter",
  service: "service", membership: "membership" };

function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

function ago(t) {
  if (!t) return "";
  const s = Math.max(0, (Date.now() - new Date(t).getTime()) / 1000);
  if (s < 60) return s.toFixed(0) + "s ago";
  if (s < 3600) return (s / 60).toFixed(0) + "m ago";
  if (s < 86400) return (s / 3600).toFixed(1) + "h ago";
  return (s / 86400).toFixed(1) + "d ago";
}

function since(t) {
  return `<span class="ago" data-t="${esc(t)}" title="${esc(t)}">${ago(t)}</span>`;
}

function kv(pairs) {
  return `<div class="kv">${pairs.filter(p => p).map(([k, v]) => `<span>${esc(k)} <b>${v}</b></span>`).join("")}</div>`;
}

function contender(c, holder, path) {
  const who = c.id ? esc(c.id) : "session " + esc(c.session);
  let brk = "";
  if (admin && holder) {
    brk = ` <button class="danger" data-break="${esc(path)}" data-node="${esc(c.node)}">break</button>`;
  }
  return `<li><b class="who">${who}</b>${c.write ? ' <span class="badge">write</span>' : ""}` +
    ` <span class="mono">${c.id ? "session " + esc(c.session) + " · " : ""}token ${c.token} · ${since(c.since)}</span>${brk}</li>`;
}

function renderGroup(v) {
  const g = v.group;
  const state = g.rebalancing
    ? `<span class="badge wait rebalancing">rebalancing (${g.pending} pending)</span>`
    : `<span class="badge ok settled">settled</span>`;
  const coord = g.members.find(m => m.id === g.coordinator);
  let html = kv([["coordinator", `<span class="coordinator">${esc((coord && coord.name) || g.coordinator || "none")}</span>`],
    ["term", g.term], ["generation", `<span class="generation">${g.generation}</span>`],
    ["mode", esc(g.mode || "?")], ["members", g.members.length], ["resources", g.resources],
    g.phase && ["phase", esc(g.phase)], ["", state]]);
  if (g.alloc_error) html += `<p class="err">${esc(g.alloc_error)}</p>`;
  // The grid: one row per member, its resources as chips: green when it
  // holds the barrier, amber while it waits for it, struck through while
  // it still holds one allocated to someone else.
  const leaving = new Map();
  for (const [r, b] of Object.entries(g.barriers)) {
    const owner = (g.allocation[b.client] || []).includes(r);
    if (!owner) {
      if (!leaving.has(b.client)) leaving.set(b.client, []);
      leaving.get(b.client).push(r);
    }
  }
  const rows = g.members.map(m => {
    const rs = g.allocation[m.id] || [];
    const chips = rs.map(r => {
      const b = g.barriers[r];
      const held = b && b.client === m.id;
      return `<span class="chip${held ? "" : " wait"}" title="${held ? "barrier token " + b.token : "waiting for the barrier"}">${esc(r)}</span>`;
    }).join("") + (leaving.get(m.id) || []).map(r => `<span class="chip leaving" title="stopping">${esc(r)}</span>`).join("");
    // A member goes by its name (--name, or host and pid); its node id,
    // which the allocation uses, follows in grey.
    const where = [m.host, m.pid ? "pid " + m.pid : ""].filter(x => x).join(" ");
    const name = m.name ? `<span class="member-name">${esc(m.name)}</span> <span class="id">${esc(m.id)}</span>`
      : `<span class="member-name">${esc(m.id)}</span>`;
    return `<tr data-member="${esc(m.id)}"><td class="mono">${name}${m.coordinator ? ' <span class="badge ok">coordinator</span>' : ""}</td>` +
      `<td class="mono">${esc(where)}</td><td class="mono">${esc(m.session)}</td>` +
      `<td>${rs.length}</td><td><div class="chips">${chips}</div></td></tr>`;
  }).join("");
  html += `<table class="grid"><thead><tr><th>member</th><th>host</th><th>session</th><th>#</th><th>resources</th></tr></thead><tbody>${rows}</tbody></table>`;
  if (g.unallocated && g.unallocated.length) {
    html += `<p class="more">unallocated: ${g.unallocated.slice(0, 50).map(esc).join(" ")}${g.unallocated.length > 50 ? " …" : ""}</p>`;
  }
  if (admin) {
    html += `<p><input size="20" placeholder="resource id" data-res="${esc(v.path)}"> ` +
      `<button data-op="add" data-group="${esc(v.path)}">add resource</button> ` +
      `<button class="danger" data-op="remove" data-group="${esc(v.path)}">remove resource</button></p>`;
  }
  return html;
}

function renderElection(v) {
  const e = v.election;
  const l = e.leader;
  let html = kv([["leader", `<span class="leader">${l ? esc(l.id || l.session) : "none"}</span>`],
    l && ["since", since(l.since)], l && ["token", l.token], ["term", e.term],
    ["", e.acting ? '<span class="badge ok">acting</span>' : '<span class="badge wait">not acting</span>']]);
  html += `<ol class="order">${e.participants.map((c, i) => contender(c, false)).join("")}</ol>`;
  return html;
}

function renderLock(v) {
  const l = v.lock;
  let html = kv([["holders", `<span class="holders">${l.holders.map(h => esc(h.id || h.session)).join(", ") || "none"}</span>`],
    ["waiting", l.waiters.length]]);
  html += `<ol class="order">${l.holders.map(c => contender(c, true, v.path)).join("")}` +
    `${l.waiters.map(c => contender(c, false)).join("")}</ol>`;
  return html;
}

function renderQueue(v) {
  const q = v.queue;
  return kv([["depth", `<span class="depth">${q.depth}</span>`], q.oldest && ["oldest item", since(q.oldest)]]);
}

function renderBarrier(v) {
  const b = v.barrier;
  if (v.kind === "barrier") return kv([["", b.set ? '<span class="badge wait">set: holding back</span>' : '<span class="badge ok">open</span>']]);
  return kv([["members", b.members.length], ["", b.ready ? '<span class="badge ok">ready</span>' : '<span class="badge wait">gathering</span>']]);
}

function renderCounter(v) {
  return kv([["value", `<span class="value">${v.counter.value}</span>`], ["version", v.counter.version]]);
}

function renderService(v) {
  const s = v.service;
  const up = s.instances.filter(i => !i.disabled && !i.error).length;
  let html = kv([["service", esc(s.name)], ["instances", `<span class="count">${s.instances.length}</span>`], ["enabled", up]]);
  // One row per instance: where it listens, since when, and its payload.
  const rows = s.instances.map(i => {
    const where = i.address || i.port ? `${esc(i.address)}:${i.port ?? ""}` : "";
    const state = i.error ? `<span class="badge bad">${esc(i.error)}</span>`
      : i.disabled ? '<span class="badge wait">disabled</span>' : "";
    return `<tr data-instance="${esc(i.id)}"${i.disabled ? ' class="disabled"' : ""}>` +
      `<td class="mono">${esc(i.id)} ${state}</td><td class="mono addr">${where}</td>` +
      `<td class="mono">${i.ssl_port || ""}</td><td>${i.registered ? since(i.registered) : ""}</td>` +
      `<td class="mono">${esc(i.type || "")}${i.session ? " " + esc(i.session) : ""}</td>` +
      `<td class="mono">${esc(i.payload || "")}${i.uri ? "<br>" + esc(i.uri) : ""}</td></tr>`;
  }).join("");
  html += `<table><thead><tr><th>instance</th><th>address:port</th><th>ssl port</th><th>registered</th>` +
    `<th>type, session</th><th>payload</th></tr></thead><tbody>${rows}</tbody></table>`;
  return html;
}

function renderMembership(v) {
  const g = v.membership;
  let html = kv([["members", `<span class="count">${g.members.length}</span>`]]);
  const rows = g.members.map(m => `<tr data-member="${esc(m.id)}"><td class="mono">${esc(m.id)}</td>` +
    `<td class="mono">${esc(m.session)}</td><td>${since(m.since)}</td><td class="mono">${esc(m.data || "")}</td></tr>`).join("");
  html += `<table><thead><tr><th>member</th><th>session</th><th>joined</th><th>data</th></tr></thead><tbody>${rows}</tbody></table>`;
  return html;
}

const renderers = { group: renderGroup, election: renderElection, lock: renderLock, rwlock: renderLock,
  semaphore: renderLock, queue: renderQueue, barrier: renderBarrier, "double-barrier": renderBarrier, counter: renderCounter,
  service: renderService, membership: renderMembership };

function cardID(path) { return "card:" + path; }

function render(v) {
  const began = performance.now();
  const sec = document.getElementById("sec-" + sectionOf[v.kind]);
  if (!sec) return; // a kind this page does not know: the other cards still draw
  let card = document.getElementById(cardID(v.path));
  if (!card) {
    card = document.createElement("div");
    card.className = "card";
    card.id = cardID(v.path);
    card.dataset.path = v.path;
    card.dataset.kind = v.kind;
    const cards = sec.querySelector(".cards");
    const next = [...cards.children].find(c => c.dataset.path > v.path);
    cards.insertBefore(card, next || null);
  }
  const kind = v.kind === "lock" ? "mutex" : v.kind;
  let body;
  try {
    body = v.error ? `<p class="err">${esc(v.error)}</p>` : renderers[v.kind](v);
  } catch (e) {
    body = `<p class="err">cannot show: ${esc(e)}</p>`;
  }
  card.innerHTML = `<h3>${esc(v.path)} <span class="badge">${esc(kind)}</span></h3>` + body;
  card.dataset.rendered = String(Date.now());
  card.dataset.renderMs = (performance.now() - began).toFixed(1);
  sections();
}

// Views arriving faster than the page draws are coalesced: each card is
// drawn once per frame, with its newest view.
const due = new Set();
function schedule(path) {
  if (due.size === 0) requestAnimationFrame(flush);
  due.add(path);
}
function flush() {
  for (const p of due) { const v = views.get(p); if (v) render(v); }
  due.clear();
}

function gone(path) {
  views.delete(path);
  due.delete(path);
  const card = document.getElementById(cardID(path));
  if (card) card.remove();
  sections();
}

function sections() {
  for (const s of document.querySelectorAll("#recipes section")) {
    s.classList.toggle("has", s.querySelector(".card") !== null);
  }
  document.getElementById("empty").style.display = views.size ? "none" : "";
}

function timeline(e) {
  const ol = document.getElementById("timeline");
  const li = document.createElement("li");
  li.dataset.seq = e.seq;
  li.dataset.kind = e.kind;
  li.dataset.path = e.path;
  const t = new Date(e.time);
  li.innerHTML = `<span class="t">${t.toLocaleTimeString([], { hour12: false })}.${String(t.getMilliseconds()).padStart(3, "0")}</span> ` +
    `<span class="p">${esc(e.path)}</span> <span class="text">${esc(e.text)}</span>`;
  ol.insertBefore(li, ol.firstChild);
  while (ol.children.length > maxTimeline) ol.lastChild.remove();
}

function status(s) {
  admin = s.admin;
  document.getElementById("roots").textContent = (s.roots || []).join(" ");
  // A root created later is found then: say where the console looks.
  document.getElementById("empty").textContent = `No recipes found yet under ${(s.roots || []).join(" ")}: ` +
    "the page shows them as they are created.";
  const mode = document.getElementById("mode");
  mode.textContent = admin ? "admin" : "read-only";
  mode.className = "badge" + (admin ? " admin" : "");
  const conn = document.getElementById("conn");
  if (!s.connected) {
    // The last known state stays on the page until ZooKeeper answers again.
    conn.textContent = "disconnected" + (s.failure ? ": " + s.failure : "") + " (showing the last known state)";
    conn.className = "badge bad";
  }
  else if (s.failure) { conn.textContent = s.failure; conn.className = "badge bad"; }
  else if (s.settled) { conn.textContent = "live"; conn.className = "badge ok"; }
  else { conn.textContent = "loading"; conn.className = "badge wait"; }
  for (const v of views.values()) render(v);
}

function connect() {
  const es = new EventSource("api/events");
  es.addEventListener("status", m => status(JSON.parse(m.data)));
  es.addEventListener("view", m => { const v = JSON.parse(m.data); views.set(v.path, v); schedule(v.path); });
  es.addEventListener("gone", m => gone(JSON.parse(m.data)));
  es.addEventListener("event", m => timeline(JSON.parse(m.data)));
  es.onerror = () => {
    const conn = document.getElementById("conn");
    conn.textContent = "reconnecting"; conn.className = "badge wait";
    // EventSource reconnects by itself; the server starts over with a
    // full batch, so the timeline is rebuilt.
    document.getElementById("timeline").innerHTML = "";
  };
}

async function post(url, form) {
  const res = await fetch(url, { method: "POST", body: new URLSearchParams(form), headers: { "X-Zkcoord-Admin": adminKey } });
  const body = await res.json().catch(() => ({ result: res.statusText }));
  alert(body.result);
}

document.addEventListener("click", ev => {
  const b = ev.target.closest("button");
  if (!b) return;
  if (b.dataset.break) {
    const node = b.dataset.node;
    const typed = prompt(`Break ${b.dataset.break}: delete the holder's node?\nType the node name to confirm:\n${node}`);
    if (typed !== null) post("api/admin/break-lock", { path: b.dataset.break, node, confirm: typed });
  } else if (b.dataset.op) {
    const input = document.querySelector(`input[data-res="${CSS.escape(b.dataset.group)}"]`);
    const id = input.value.trim();
    if (!id) return;
    const typed = prompt(`${b.dataset.op} resource ${id} in ${b.dataset.group}?\nType the resource id to confirm:`);
    if (typed !== null) post("api/admin/resource", { group: b.dataset.group, op: b.dataset.op, id, confirm: typed });
  }
});

setInterval(() => { for (const a of document.querySelectorAll(".ago")) a.textContent = ago(a.dataset.t); }, 1000);
connect();
