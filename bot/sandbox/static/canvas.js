// The channel's canvases, as Slack shows a checklist canvas: a tab per canvas in the channel
// header, and the canvas itself (its title, headings and checklist) over the page. A link to a
// canvas of this workspace (the thread's "Open the shopping list", the Home tab's "Open list")
// opens it here: there is no Slack. Ticking an item is what a person does in Slack
// (POST /ui/tick). Everything shown is text (esc), never HTML.
"use strict";

const CANVAS_LINK = /\/docs\/[A-Z0-9]+\/(F[A-Z0-9]+)$/;

function canvasById(id) {
  return (state.canvases || []).find((c) => c.id === id);
}

function renderCanvas(id) {
  const canvas = canvasById(id);
  if (!canvas) { closeOverlay(); return; }
  const lines = canvas.lines.map((line) => {
    if (line.kind === "heading") return `<h3 class="canvas-heading">${esc(line.text)}</h3>`;
    if (line.kind === "text") return `<p class="canvas-text">${esc(line.text)}</p>`;
    return `<label class="canvas-item${line.ticked ? " ticked" : ""}">
      <input type="checkbox" data-canvas="${esc(canvas.id)}" data-index="${line.index}"
        ${line.ticked ? "checked" : ""}> <span>${esc(line.text)}</span></label>`;
  }).join("");
  showOverlay("canvas", `<div class="modal canvas" id="canvas" role="dialog"
      aria-label="${esc(canvas.title)}">
    <div class="modal-title">${esc(canvas.title)}</div>
    <div class="modal-body">${lines}</div>
    <div class="modal-footer"><button id="canvas-close">Close</button></div></div>`, canvas.id);
  $("#canvas-close").onclick = closeOverlay;
  document.querySelectorAll("#canvas input[type=checkbox]").forEach((box) => {
    box.onchange = async () => {
      await post("/ui/tick", { canvas: box.dataset.canvas, index: Number(box.dataset.index),
        ticked: box.checked });
      refresh();
    };
  });
}

function renderCanvasTabs() {
  const header = document.querySelector(".channel-header");
  let tabs = $("#canvas-tabs");
  if (!tabs) {
    tabs = document.createElement("div");
    tabs.id = "canvas-tabs";
    tabs.className = "canvas-tabs";
    header.after(tabs);
  }
  const canvases = view === "home" ? [] : (state.canvases || []);
  tabs.hidden = canvases.length === 0;
  tabs.innerHTML = canvases.map((c) =>
    `<button type="button" class="canvas-tab" data-open-canvas="${esc(c.id)}">${esc(c.title)}</button>`
  ).join("");
  const overlay = $("#overlay");
  if (overlay.dataset.kind === "canvas") renderCanvas(overlay.dataset.view);
}

const renderPage = render;
render = function renderWithCanvases() {  // eslint-disable-line no-global-assign
  renderPage();
  renderCanvasTabs();
};

document.addEventListener("click", (event) => {
  const tab = event.target.closest("[data-open-canvas]");
  if (tab) { renderCanvas(tab.dataset.openCanvas); return; }
  const link = event.target.closest("a[href]");
  const found = link && CANVAS_LINK.exec(link.getAttribute("href"));
  if (!found || !canvasById(found[1])) return;
  event.preventDefault();
  renderCanvas(found[1]);
});
