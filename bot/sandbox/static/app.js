// The sandbox page: renders the Block Kit the bot really sent, and turns clicks into the
// requests Slack would send (the server signs them and hands them to the Lambda handler).
"use strict";

const $ = (sel) => document.querySelector(sel);
let state = { messages: [], people: {}, sessions: [], version: undefined };
let user = localStorage.getItem("sandbox-user") || "U0ALICE";
let channel = localStorage.getItem("sandbox-channel") || "C0WEEKLYSHOP";
// The workspace the page shows ("" is the first); each has its own channels, Home tab, sessions.
let team = localStorage.getItem("sandbox-team") || "";
// What the install's last page said, per workspace ("Add to Slack").
const installPages = {};
// What the middle column shows: the channel, or the app's Home tab ("home").
let view = localStorage.getItem("sandbox-view") === "home" ? "home" : "channel";

function esc(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

function unescapeSlack(text) {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

function formatPlain(text) {
  // Slack-escaped text -> HTML, with *bold*, _italic_ and `code`.
  let html = esc(unescapeSlack(text));
  html = html.replace(/`([^`\n]+)`/g, "<code>$1</code>");
  html = html.replace(/(^|[\s(])\*([^*\n]+)\*(?=$|[\s).,!?:;])/g, "$1<b>$2</b>");
  html = html.replace(/(^|[\s(])_([^_\n]+)_(?=$|[\s).,!?:;])/g, "$1<i>$2</i>");
  return html;
}

function stamp(when) {
  // The page's one way of saying when (messages, checkpoints, the lock, timers): "Thu 14:56:03",
  // in the browser's time zone. `when`: epoch seconds, or an ISO date.
  const d = typeof when === "number" ? new Date(when * 1000) : new Date(when);
  return d.toLocaleString(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit",
    second: "2-digit", hourCycle: "h23" });
}

function formatDate(token) {
  // <!date^1700000000^{date_short_pretty} at {time}|fallback>
  const [spec, fallback] = token.split("|");
  const epoch = Number(spec.split("^")[1]);
  if (!epoch) return esc(fallback || spec);
  const d = new Date(epoch * 1000);
  return esc(d.toLocaleDateString(undefined, { month: "short", day: "numeric" }) + " at " +
    d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" }));
}

function mrkdwn(text) {
  // Real angle brackets are Slack markup (mentions, dates, links); escaped ones are text.
  return String(text || "").split(/(<[^<>]+>)/).map((part) => {
    if (!part.startsWith("<") || !part.endsWith(">")) return formatPlain(part);
    const inner = part.slice(1, -1);
    if (inner.startsWith("@")) {
      const id = inner.slice(1).split("|")[0];
      return `<span class="mention">@${esc(state.people[id] || id)}</span>`;
    }
    if (inner.startsWith("#")) {
      const [id, label] = inner.slice(1).split("|");
      const known = (state.channels || []).find((c) => c.id === id);
      const name = known ? known.name : label || id;
      return known
        ? `<span class="mention channel-link" data-channel="${esc(id)}">#${esc(name)}</span>`
        : `<span class="mention">#${esc(name)}</span>`;
    }
    if (inner.startsWith("!date^")) return formatDate(inner);
    if (inner.startsWith("!")) return `<span class="mention">@${esc(inner.slice(1))}</span>`;
    const [url, label] = inner.split("|");
    // Only http(s) links become links: a javascript: or data: URL is shown as text.
    if (!/^https?:\/\//i.test(url)) return esc(label || url);
    return `<a href="${esc(url)}" target="_blank" rel="noopener noreferrer">${esc(label || url)}</a>`;
  }).join("");
}

function markdown(text) {
  // A markdown block (a streamed reply): **bold**, _italic_ or *italic*, `code`, "- " bullets.
  let html = esc(String(text || ""));
  html = html.replace(/`([^`\n]+)`/g, "<code>$1</code>");
  html = html.replace(/\*\*([^*\n]+)\*\*/g, "<b>$1</b>");
  html = html.replace(/(^|[\s(])[*_]([^*_\n]+)[*_](?=$|[\s).,!?:;])/gm, "$1<i>$2</i>");
  return html.replace(/^- /gm, "• ");
}

function renderFeedback(el, where, blockId) {
  // context_actions: feedback buttons (👍 / 👎, each its own value) and icon buttons.
  const pair = el.type === "feedback_buttons" ? [el.positive_button, el.negative_button] : [el];
  return pair.filter(Boolean).map((b) => renderButton(
    { action_id: el.action_id, value: b.value, text: b.text || { text: el.icon || "" } },
    where, blockId)).join("");
}

function textOf(obj) {
  if (!obj) return "";
  return obj.type === "mrkdwn" ? mrkdwn(obj.text) : esc(obj.text);
}

function renderButton(el, where, blockId) {
  // A url button is a link (only http(s), as in mrkdwn()); any other sends its click. `where`
  // says whose button it is: a message's (data-ts) or the Home tab's (data-home). A click sends
  // what this screen shows (action, value, block), as Slack's client does: a screen the bot has
  // since updated still reaches the bot, which says why the click no longer counts.
  const label = esc(el.text.text);
  if (el.url !== undefined) {
    if (!/^https?:\/\//i.test(el.url)) return `<span class="block-button">${label}</span>`;
    return `<a class="block-button" href="${esc(el.url)}" target="_blank"
      rel="noopener noreferrer">${label}</a>`;
  }
  return `<button class="block-button ${esc(el.style || "")}" ${where}
    data-action="${esc(el.action_id)}" data-value="${esc(el.value || "")}"
    data-block="${esc(blockId || "")}">${label}</button>`;
}

function renderBlock(block, where) {
  switch (block.type) {
    case "header": return `<div class="block-header">${esc(block.text.text)}</div>`;
    case "section": {
      const text = `<div class="block-section">${textOf(block.text)}</div>`;
      const side = block.accessory && block.accessory.type === "button" ? block.accessory : null;
      return side
        ? `<div class="with-accessory">${text}${renderButton(side, where, block.block_id)}</div>`
        : text;
    }
    case "context":
      return `<div class="block-context">${block.elements.map(textOf).join(" ")}</div>`;
    case "divider": return "<hr>";
    case "markdown": return `<div class="block-section block-markdown">${markdown(block.text)}</div>`;
    case "context_actions":
      return `<div class="block-actions context-actions">${block.elements
        .map((el) => renderFeedback(el, where, block.block_id)).join("")}</div>`;
    case "actions":
      return `<div class="block-actions">${block.elements.filter((el) => el.type === "button")
        .map((el) => renderButton(el, where, block.block_id)).join("")}</div>`;
    default: return "";
  }
}

function renderBody(m) {
  // As Slack shows a message: its blocks when it has any, else its text.
  return (m.blocks && m.blocks.length)
    ? m.blocks.map((b) => renderBlock(b, `data-ts="${esc(m.ts)}"`)).join("")
    : `<div class="block-section">${mrkdwn(m.text)}</div>`;
}

function renderMessage(m) {
  const body = renderBody(m);
  // A reply still streaming grows with each append (a cursor at its end until it stops).
  const replies = (m.replies || []).map((r) =>
    `<div class="reply${r.ephemeral_for ? " ephemeral" : ""}${r.streaming ? " streaming" : ""}"
      data-ts="${esc(r.ts)}"><span class="name">Weekly shop</span>
      ${r.ephemeral_for ? '<span class="only-you">Only visible to you</span>' : ""}
      ${renderBody(r)}${r.streaming ? '<span class="cursor">▍</span>' : ""}</div>`).join("");
  // The thread's status line while the app works, as Slack shows it: "<App Name> <status>".
  const working = m.assistant_status;
  const status = working ? `<div class="thread-status">Weekly shop ${esc(working.status)}${
    (working.loading_messages || []).length ? ` · <i>${esc(working.loading_messages[0])}</i>` : ""
  }</div>` : "";
  const time = stamp(Number(m.ts.split(".")[0]));  // a message's ts is when it was posted
  const marked = m.ts === fired
    ? '<div class="fired-here">⏰ The timer you fast-forwarded posted in this thread</div>' : "";
  return `<div class="message${m.ephemeral_for ? " ephemeral" : ""}${marked ? " fired" : ""}" data-ts="${esc(m.ts)}">
    <div class="avatar">W</div>
    <div><div class="meta"><span class="name">Weekly shop</span><span class="app">APP</span>
      <span class="time">${time}</span>${m.edited ? ' <span class="edited">(edited)</span>' : ""}</div>
      ${m.ephemeral_for ? '<div class="only-you">Only visible to you</div>' : ""}
      ${marked}${body}
      ${replies ? `<div class="replies"><div class="only-you">${m.replies.length} ${m.replies.length === 1 ? "reply" : "replies"}</div>${replies}</div>` : ""}
      ${status}
    </div></div>`;
}

function renderChannels() {
  $("#channels").innerHTML = (state.channels || []).map((c) =>
    `<div class="channel${c.id === channel ? " active" : ""}" data-channel="${esc(c.id)}">
      # ${esc(c.name)}${c.bot ? "" : ' <span class="not-in">(Weekly shop not added)</span>'}</div>`).join("");
  const here = (state.channels || []).find((c) => c.id === channel);
  const name = here ? here.name : "weekly-shop";
  $(".channel-header").textContent = view === "home" ? "Weekly shop · Home" : `# ${name}`;
  $("#home-link").classList.toggle("active", view === "home");
  document.querySelectorAll("#channels .channel.active").forEach((c) => {
    if (view === "home") c.classList.remove("active");
  });
  $("#composer").placeholder = here && !here.bot
    ? `Message #${name} — /shop is refused here until /invite @weekly-shop`
    : `Message #${name} — try /shop pasta Monday, fish Friday; we have rice`;
}

function showChannel(id, ts) {
  channel = id;
  view = "channel";
  localStorage.setItem("sandbox-channel", channel);
  localStorage.setItem("sandbox-view", view);
  state.version = undefined;
  closeOverlay();
  refresh().then(() => {
    const shown = ts && document.querySelector(`.message[data-ts="${CSS.escape(ts)}"]`);
    if (shown) shown.scrollIntoView({ block: "center" });
  });
}

document.addEventListener("click", (event) => {
  const item = event.target.closest("[data-channel]");
  if (item) showChannel(item.dataset.channel, item.dataset.ts);
});

// A message's permalink (what the Home tab's Open links to) opens it here: there is no Slack.
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[href]");
  const found = link && /\/archives\/([A-Z0-9]+)\/p(\d{7,})$/.exec(link.getAttribute("href"));
  if (!found || !(state.channels || []).some((c) => c.id === found[1])) return;
  event.preventDefault();
  showChannel(found[1], `${found[2].slice(0, -6)}.${found[2].slice(-6)}`);
});

async function openHome() {
  // Opening the tab is what Slack tells the bot (app_home_opened); it publishes the view.
  view = "home";
  localStorage.setItem("sandbox-view", view);
  closeOverlay();
  render();
  await post("/ui/home", {});
  refresh();
}

$("#home-link").addEventListener("click", openHome);

function renderHome() {
  const home = state.home;
  // No installation, no Home tab: Slack sends the app nothing there, so it never publishes one.
  const here = (state.workspaces || []).find((w) => w.id === team);
  const absent = here && !here.installed
    ? `<p class="panel-hint">Weekly shop is not installed in ${esc(here.name)}: add it to Slack first.</p>`
    : "";
  $("#home").innerHTML = home
    ? home.blocks.map((b) => renderBlock(b, 'data-home="1"')).join("")
    : absent || '<p class="panel-hint">Opening the Home tab…</p>';
}

const LEGEND = {
  run: "The run that wrote it (its run ID's last 8 characters): one Lambda invocation's turn, " +
    "a /shop or a click",
  pending: "The request the workflow waits on, in the latest checkpoint: its port and its ID's " +
    "first 8 characters. The basket's buttons answer it",
};

function renderCheckpoints(s) {
  if (!s.checkpoints.length) {
    return s.status === "working"
      ? '<div class="panel-hint">No checkpoint yet: the shopper is writing the first basket.</div>'
      : '<div class="panel-hint">No checkpoints: only its outcome record is left.</div>';
  }
  // What wrote the checkpoints: one line when they agree (a deploy in between makes a column).
  const versions = [...new Set(s.checkpoints.map((c) => c.version || ""))];
  const mixed = versions.length > 1;
  const rows = s.checkpoints.map((c, i) => `<tr class="${i === s.checkpoints.length - 1 ? "latest" : ""}">
    <td>${esc(c.id)}</td><td>${esc(c.parent || "—")}</td><td>${esc(c.run)}</td>
    <td>${esc(stamp(c.created_at))}</td><td>${c.size} B</td>
    ${mixed ? `<td class="wraps">${esc(c.version || "")}</td>` : ""}</tr>`).join("");
  // The request the latest checkpoint waits on, under the table (a column ran past the card).
  const pending = (s.checkpoints[s.checkpoints.length - 1].pending || []).join(", ");
  return `${mixed || !versions[0] ? "" : `<div class="written-by">written by ${esc(versions[0])}</div>`}
    <table><tr><th>checkpoint</th><th>parent</th><th title="${esc(LEGEND.run)}">run</th><th>at</th>
    <th>size</th>${mixed ? "<th>written by</th>" : ""}</tr>
    ${rows}</table>${pending ? `<div class="pending" title="${esc(LEGEND.pending)}">pending in
    the latest: ${esc(pending)}</div>` : ""}`;
}

function cardTitle(s) {
  // What matches a card to the channel: where, what was asked, which basket.
  const where = (state.channels || []).find((c) => c.id === s.channel);
  const parts = [where ? `#${esc(where.name)}` : "",
    s.request ? `“${esc(s.request)}”` : "", s.basket ? `basket ${esc(s.basket)}` : ""];
  const title = parts.filter(Boolean).join(" · ");
  if (!title) return "";
  return s.ts && where
    ? `<div class="card-title channel-link" data-channel="${esc(s.channel)}" data-ts="${esc(s.ts)}"
        title="Show its basket in the channel">${title}</div>`
    : `<div class="card-title">${title}</div>`;
}

// What a card says first, in the household's words: where the basket is and who did what. The
// engine's terms (session, lock, checkpoints) are one click away, under "How it is stored".
const STORY = {  // after the status badge
  waiting: () => "for an answer",
  held: (s) => `by ${esc((s.approved_by || []).join(", ") || "?")} · ordering at ` +
    `${esc(stamp(s.ordering_at))} unless someone presses Undo`,
  working: () => "the shopper is writing a basket",
  ordered: () => "",
  rejected: () => "nothing ordered",
  expired: () => "nobody answered in time, nothing ordered",
  failed: () => "the shopper could not write a basket",
};

// The cards whose "How it is stored" is open: they stay open when the panel is drawn again.
const openEngine = new Set();
document.addEventListener("toggle", (event) => {
  const details = event.target;
  if (!details.matches || !details.matches("details.engine")) return;
  if (details.open) openEngine.add(details.dataset.session);
  else openEngine.delete(details.dataset.session);
}, true);

function renderSessions() {
  if (!state.sessions.length) {
    $("#sessions").innerHTML = '<p class="panel-hint">No baskets yet: type /shop …</p>';
    return;
  }
  $("#sessions").innerHTML = state.sessions.map((s) => {
    const lock = s.lock
      ? `<div class="lock held">Lock held by ${esc(s.lock.owner)} until ${esc(stamp(s.lock.expires_at))}</div>`
      : '<div class="lock">Lock free</div>';
    const who = [s.requested_by ? `asked by ${esc(s.requested_by)}` : "",
      s.answered_by ? `${s.answer === "changed" ? "changed" : "answered"} by ${esc(s.answered_by)}` : ""]
      .filter(Boolean).join(" · ");
    const label = s.status === "held" ? "approved" : s.status;
    const status = s.status ? `<span class="status ${esc(s.status)}">${esc(label)}</span>` : "";
    const story = (STORY[s.status] || (() => ""))(s);
    const count = s.checkpoints.length;
    return `<div class="session">${cardTitle(s)}
      <div class="story">${status} ${story}</div>
      ${who ? `<div class="who-did">${who}</div>` : ""}
      ${s.error ? `<div class="lock held">${esc(s.error)}</div>` : ""}
      <details class="engine" data-session="${esc(s.session)}" ${openEngine.has(s.session) ? "open" : ""}><summary>How it is stored: ${count} checkpoint${count === 1 ? "" : "s"}${s.lock ? ", lock held" : ""}</summary>
        <div class="session-id">session ${esc(s.session)}</div>
        <p class="panel-hint">Each step of the workflow (a superstep) appends a checkpoint to S3; a
          click takes the session lock; the request pending in the latest checkpoint is the basket
          with live buttons.</p>
        ${s.error ? "" : lock}${renderCheckpoints(s)}</details></div>`;
  }).join("");
}

function timerBasket(t) {
  // A timer's basket as its session card names it: the request's first words, its number.
  if (t.kind === "weekly") {
    const where = (state.channels || []).find((c) => c.id === t.channel);
    return `${where ? `#${where.name} · ` : ""}“${t.request}”`;
  }
  const s = state.sessions.find((x) => x.session === t.session);
  return s && s.request ? `“${s.request}” · basket ${s.basket || "?"}` : t.session;
}

const TIMER_KIND = { remind: (t) => `reminder ${t.n}`, order: () => "order (undo window ends)",
  expire: () => "expiry", weekly: () => "weekly run" };

function renderTimers() {
  const timers = state.timers || [];
  $("#fast-forward").disabled = !timers.length;
  $("#timers").innerHTML = timers.length
    ? `<table><tr><th>basket</th><th>timer</th><th>due</th></tr>${timers.map((t) => `<tr>
        <td class="wraps">${esc(timerBasket(t))}</td><td>${esc((TIMER_KIND[t.kind] || (() => t.kind))(t))}</td>
        <td class="wraps">${t.kind === "weekly" ? `${esc(t.local)}<br>${esc(t.utc)}` : esc(stamp(t.at))}</td></tr>`).join("")}</table>`
    : '<p class="panel-hint">No timers: no basket is waiting, and no weekly run is set.</p>';
}

// The basket whose thread the last fast-forwarded timer posted in: often an older one, off-screen,
// so the page scrolls to it and marks it until the next fast-forward.
let fired = "";

$("#fast-forward").addEventListener("click", async () => {
  $("#fast-forward").disabled = true;
  const answer = await post("/ui/fast-forward", {});
  fired = answer.thread_ts || "";
  if (fired) showChannel(answer.channel, fired); else refresh();
});

// A modal as Slack shows it: its header, section and context blocks, and each input block's
// element (pre-filled with its initial value); each element says its type (data-type), so that
// a submission sends state.values in exactly the shape Slack sends for that type.
function renderInput(b) {
  const el = b.element;
  const id = `in-${esc(b.block_id)}`;
  const data = `id="${id}" data-block="${esc(b.block_id)}" data-action="${esc(el.action_id)}"
    data-type="${esc(el.type)}" class="modal-input"`;
  const initial = el.initial_value || "";
  switch (el.type) {
    case "plain_text_input":
      return el.multiline
        ? `<textarea ${data} maxlength="${el.max_length || 3000}"
            placeholder="${esc(el.placeholder ? el.placeholder.text : "")}">${esc(initial)}</textarea>`
        : `<input type="text" ${data} maxlength="${el.max_length || 3000}" value="${esc(initial)}">`;
    case "number_input":
      return `<input type="number" ${data} step="${el.is_decimal_allowed ? "any" : "1"}" min="${esc(el.min_value || "")}"
        max="${esc(el.max_value || "")}" value="${esc(initial)}">`;
    case "timepicker":
      return `<input type="time" ${data} value="${esc(el.initial_time || "")}">`;
    case "static_select": {
      const chosen = el.initial_option ? el.initial_option.value : "";
      return `<select ${data}>${el.options.map((o) => `<option value="${esc(o.value)}"
        ${o.value === chosen ? "selected" : ""}>${esc(o.text.text)}</option>`).join("")}</select>`;
    }
    case "checkboxes": {
      const on = (el.initial_options || []).map((o) => o.value);
      return `<div ${data}>${el.options.map((o) => `<label class="check"><input type="checkbox"
        value="${esc(o.value)}" ${on.includes(o.value) ? "checked" : ""}> ${esc(o.text.text)}</label>`)
        .join("")}</div>`;
    }
    case "multi_static_select": {
      const on = (el.initial_options || []).map((o) => o.value);
      return `<select multiple ${data}>${el.options.map((o) => `<option value="${esc(o.value)}"
        ${on.includes(o.value) ? "selected" : ""}>${esc(o.text.text)}</option>`).join("")}</select>`;
    }
    case "multi_users_select": {
      const on = el.initial_users || [];
      return `<select multiple ${data}>${Object.entries(state.people).map(([uid, name]) =>
        `<option value="${esc(uid)}" ${on.includes(uid) ? "selected" : ""}>${esc(name)}</option>`)
        .join("")}</select>`;
    }
    case "conversations_select": {
      const chosen = el.initial_conversation || "";
      return `<select ${data}><option value="">(none)</option>${(state.channels || []).map((c) =>
        `<option value="${esc(c.id)}" ${c.id === chosen ? "selected" : ""}>#${esc(c.name)}</option>`)
        .join("")}</select>`;
    }
    default: return `<div class="panel-hint">(${esc(el.type)})</div>`;
  }
}

function renderModal() {
  const view = state.modal;
  const overlay = $("#overlay");
  if (!view) { if (overlay.dataset.kind === "modal") closeOverlay(); return; }
  // The same view, unchanged: leave what the person typed. views.update (a loading modal
  // filled in, the stores near a ZIP) gives the view a new hash: shown anew, and, as Slack does,
  // what the person typed or chose stays in every input whose block_id and action_id it keeps.
  const same = overlay.dataset.kind === "modal" && overlay.dataset.view === view.id;
  if (same && overlay.dataset.hash === (view.hash || "")) return;
  const typed = same ? modalValues() : {};
  const body = view.blocks.map((b) => b.type === "input"
    ? `<label for="in-${esc(b.block_id)}">${esc(b.label.text)}</label>${renderInput(b)}
       ${b.hint ? `<div class="panel-hint">${esc(b.hint.text)}</div>` : ""}
       <div class="modal-error" data-error="${esc(b.block_id)}"></div>`
    : renderBlock(b, 'data-modal="1"')).join("");
  const submit = view.submit
    ? `<button class="go" id="modal-submit">${esc(view.submit.text)}</button>` : "";
  showOverlay("modal", `<div class="modal" id="modal" role="dialog" aria-label="${esc(view.title.text)}">
    <div class="modal-title">${esc(view.title.text)}</div>
    <div class="modal-body">${body}</div>
    <div class="modal-footer"><button id="modal-close">${esc(view.close ? view.close.text : "Cancel")}</button>
      ${submit}</div></div>`, view.id);
  overlay.dataset.hash = view.hash || "";
  $("#modal-close").onclick = async () => { closeOverlay(); await post("/ui/close", {}); };
  if (view.submit) $("#modal-submit").onclick = submitModal;
  document.querySelectorAll("#modal .modal-input").forEach((input) => {
    const kept = (typed[input.dataset.block] || {})[input.dataset.action];
    if (kept) restore(input, kept);
    const block = view.blocks.find((b) => b.block_id === input.dataset.block) || {};
    if (!block.dispatch_action) return;
    // An input block with dispatch_action: Enter in its text field (on_enter_pressed, the
    // default) or a choice in its select is a block_actions from the view, with its state.
    if (input.dataset.type === "plain_text_input") {
      input.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); dispatchFrom(input); } });
    } else if (input.dataset.type === "static_select") {
      input.addEventListener("change", () => dispatchFrom(input));
    }
  });
  const first = overlay.querySelector("textarea, input");
  if (first && !same) first.focus();
}

function modalValues() {
  const values = {};
  document.querySelectorAll("#modal .modal-input").forEach((input) => {
    values[input.dataset.block] = { [input.dataset.action]: stateOf(input) };
  });
  return values;
}

// What the person had in an input before views.update, put back as Slack keeps it: every
// shape stateOf reads, an emptied field or a choice cleared included.
function restore(input, kept) {
  const choose = (values) => [...input.options].forEach((o) => { o.selected = values.includes(o.value); });
  switch (kept.type) {
    case "multi_users_select": choose(kept.selected_users || []); break;
    case "multi_static_select": choose((kept.selected_options || []).map((o) => o.value)); break;
    case "static_select": {
      const wanted = kept.selected_option ? kept.selected_option.value : null;
      if (wanted !== null && [...input.options].some((o) => o.value === wanted)) input.value = wanted;
      break;
    }
    case "checkboxes": {
      const on = (kept.selected_options || []).map((o) => o.value);
      input.querySelectorAll("input[type=checkbox]").forEach((c) => { c.checked = on.includes(c.value); });
      break;
    }
    case "timepicker": input.value = kept.selected_time || ""; break;
    case "conversations_select": input.value = kept.selected_conversation || ""; break;
    default: input.value = kept.value === null || kept.value === undefined ? "" : kept.value;
  }
}

async function dispatchFrom(input) {
  await post("/ui/view-action", { values: modalValues(), block: input.dataset.block, action: input.dataset.action });
}

// What Slack sends for each element type in view.state.values[block][action].
function stateOf(input) {
  const type = input.dataset.type;
  switch (type) {
    case "multi_users_select":
      return { type, selected_users: [...input.selectedOptions].map((o) => o.value) };
    case "multi_static_select":
      return { type, selected_options: [...input.selectedOptions].map((o) =>
        ({ text: { type: "plain_text", text: o.text }, value: o.value })) };
    case "static_select": {
      const o = input.selectedOptions[0];
      return { type, selected_option: o ? { text: { type: "plain_text", text: o.text }, value: o.value } : null };
    }
    case "checkboxes":
      return { type, selected_options: [...input.querySelectorAll("input:checked")].map((c) =>
        ({ text: { type: "plain_text", text: c.parentElement.textContent.trim() }, value: c.value })) };
    case "timepicker": return { type, selected_time: input.value || null };
    case "conversations_select": return { type, selected_conversation: input.value || null };
    default: return { type, value: input.value === "" ? null : input.value };
  }
}

function showOverlay(kind, html, viewId) {
  const overlay = $("#overlay");
  overlay.innerHTML = html;
  overlay.dataset.kind = kind;
  overlay.dataset.view = viewId || "";
  overlay.hidden = false;
}

function closeOverlay() {
  const overlay = $("#overlay");
  overlay.hidden = true;
  overlay.innerHTML = "";
  overlay.dataset.kind = "";
}

async function submitModal() {
  const values = modalValues();
  $("#modal-submit").disabled = true;
  document.querySelectorAll("#modal .modal-error").forEach((slot) => { slot.textContent = ""; });
  const answer = await post("/ui/view", { values });
  if (answer.errors) {
    $("#modal-submit").disabled = false;
    Object.entries(answer.errors).forEach(([block, msg]) => {
      const slot = document.querySelector(`[data-error="${block}"]`);
      if (slot) slot.textContent = msg;
    });
    return;
  }
  if (answer.updated) { refresh(); return; }  // response_action: update: the new view shows
  closeOverlay();
  refresh();
}

function confirmThen(confirm, go) {
  showOverlay("confirm", `<div class="modal" id="confirm" role="dialog">
    <div class="modal-title">${esc(confirm.title.text)}</div>
    <div class="modal-body">${textOf(confirm.text)}</div>
    <div class="modal-footer"><button id="confirm-deny">${esc(confirm.deny.text)}</button>
      <button class="go ${confirm.style === "danger" ? "danger" : ""}" id="confirm-ok">${esc(confirm.confirm.text)}</button></div></div>`);
  $("#confirm-deny").onclick = closeOverlay;
  $("#confirm-ok").onclick = () => { closeOverlay(); go(); };
}

function findElement(ts, actionId) {
  const m = state.messages.find((x) => x.ts === ts);
  for (const b of (m && m.blocks) || []) {
    for (const el of b.type === "actions" ? b.elements : []) if (el.action_id === actionId) return el;
  }
  return null;
}

async function post(path, body) {
  const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ ...body, user, channel, team }) });
  return response.json();
}

async function refresh() {
  const asked = user, where = channel, which = team;
  const response = await fetch(`/ui/state?user=${encodeURIComponent(asked)}` +
    `&channel=${encodeURIComponent(where)}&team=${encodeURIComponent(which)}`);
  const next = await response.json();
  // Refreshes overlap: never let an older answer (or another person's) overwrite a newer one.
  if (asked !== user || where !== channel || which !== team ||
      (state.version !== undefined && next.version < state.version)) return;
  state = next;
  channel = state.channel;
  team = state.team;
  render();
  lookAgainWhileLive();
}

// Every change the bot makes is pushed (/ui/events), a basket being written included. While a
// thread's status line shows or a reply streams, the page also looks again every few seconds:
// Slack removes a status by itself after two minutes ("A two minute timeout applies":
// docs.slack.dev, assistant.threads.setStatus; bot/sandbox/slack_status.py), which no change
// announces.
let lookAgain = null;
function lookAgainWhileLive() {
  const live = state.messages.some((m) => m.assistant_status ||
    (m.replies || []).some((r) => r.streaming));
  if (live && lookAgain === null) {
    lookAgain = setTimeout(() => { lookAgain = null; refresh(); }, 5000);
  }
}

function render() {
  renderChannels();
  const home = view === "home";
  const list = $("#messages");
  // Where a channel is opened (again), it shows its newest messages.
  const atBottom = list.hidden || list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  list.hidden = home;
  $("#composer-form").hidden = home;
  $("#home").hidden = !home;
  if (home) renderHome();
  list.innerHTML = state.messages.map(renderMessage).join("");
  if (atBottom) list.scrollTop = list.scrollHeight;
  $("#banner").textContent = state.banner || "";
  $("#working").hidden = !state.busy;
  const select = $("#user");
  if (!select.options.length) {
    Object.entries(state.people).forEach(([id, name]) => select.add(new Option(name, id)));
  }
  select.value = user;
  renderWorkspaces();
  renderSessions();
  renderTimers();
  renderModal();
}

document.addEventListener("click", (event) => {
  const button = event.target.closest("button.block-button");
  if (!button) return;
  if (button.dataset.home) {
    button.disabled = true;
    post("/ui/home-click", { action_id: button.dataset.action, value: button.dataset.value })
      .then(refresh);
    return;
  }
  const { ts, action, value, block } = button.dataset;
  const element = findElement(ts, action);
  const go = async () => {
    button.disabled = true;
    await post("/ui/action", { ts, action_id: action, value, block_id: block });
    refresh();
  };
  if (element && element.confirm) confirmThen(element.confirm, go); else go();
});

$("#composer-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = $("#composer");
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  await post("/ui/command", { text });
  refresh();
});

function renderWorkspaces() {
  const all = state.workspaces || [];
  const here = all.find((w) => w.id === team);
  const select = $("#team");
  if (select.options.length !== all.length) {
    select.innerHTML = "";
    all.forEach((w) => select.add(new Option(w.name, w.id)));
  }
  select.value = team;
  $("#team-picker").hidden = all.length < 2;
  $(".workspace").textContent = here ? here.name : "Sandbox";
  const said = installPages[team];
  $("#install").hidden = !(here && !here.installed) && !said;
  $("#add-to-slack").hidden = !here || here.installed;
  // Once installed, what the install page said stays until it is read and dismissed.
  $("#install-done").hidden = !(here && here.installed && said);
  $("#install-text").textContent = said ||
    `Weekly shop is not installed in ${here ? here.name : "this workspace"}.`;
}

$("#install-done").addEventListener("click", () => {
  delete installPages[team];
  renderWorkspaces();
});

$("#team").addEventListener("change", (event) => {
  team = event.target.value;
  channel = "";
  view = "channel";
  state.version = undefined;
  localStorage.setItem("sandbox-team", team);
  closeOverlay();
  refresh();
});

$("#add-to-slack").addEventListener("click", async () => {
  // Slack's OAuth flow, run for real: the install page, Slack's authorize page (Allow or
  // Cancel), and the redirect back to the bot.
  const button = $("#add-to-slack");
  button.disabled = true;
  const answer = await post("/ui/install", {});
  button.disabled = false;
  if (answer.authorize) { showAuthorize(answer.authorize); return; }
  installPages[team] = answer.text || "Not installed.";
  refresh();
});

function showAuthorize(asked) {
  // Slack's OAuth v2 authorize page: the app asks for its scopes in this workspace.
  const scopes = asked.scopes.map((s) => `<li><code>${esc(s)}</code></li>`).join("");
  showOverlay("authorize", `<div class="authorize" id="authorize" role="dialog"
      aria-label="Slack: allow ${esc(asked.app)}">
    <h2>${esc(asked.app)} is requesting permission to access the ${esc(asked.workspace)}
      Slack workspace</h2>
    <div>Signed in as ${esc(asked.user)}. What will ${esc(asked.app)} be able to do?</div>
    <ul>${scopes}</ul>
    <div class="buttons"><button id="authorize-cancel">Cancel</button>
      <button class="allow" id="authorize-allow">Allow</button></div></div>`);
  const answered = (path) => async () => {
    $("#authorize-allow").disabled = true;
    $("#authorize-cancel").disabled = true;
    const done = await post(path, {});
    closeOverlay();
    installPages[team] = done.text || (done.ok ? "Installed." : "Not installed.");
    refresh();
  };
  $("#authorize-allow").onclick = answered("/ui/install/allow");
  $("#authorize-cancel").onclick = answered("/ui/install/cancel");
}

$("#user").addEventListener("change", (event) => {
  user = event.target.value;
  state.version = undefined;
  state.home = null; // another person's Home tab is never shown, even until theirs arrives
  localStorage.setItem("sandbox-user", user);
  closeOverlay();
  if (view === "home") openHome(); else refresh();
});

new EventSource("/ui/events").addEventListener("change", () => refresh());
if (view === "home") openHome(); else refresh();
