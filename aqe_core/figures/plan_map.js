// AQE Lens plan map (issue 40): one plan drawn as SVG from plan_map.py's data.
// The text is part of the drawing (it zooms with its box); under the smallest readable size it is
// hidden and a note says so. The wheel scrolls the page until the plan is engaged (a click or a
// drag on it) or a modifier key is held. A click opens the node's details beside it; the plan
// text beside the drawing is linked both ways. Every string from the plan is set as text, never
// as HTML. Used by the app (a Streamlit component) and the offline report (inlined).
function renderPlanMap(root, data, hooks) {
  "use strict";
  hooks = hooks || {};
  const SVG = "http://www.w3.org/2000/svg";
  const PAD = 12, PAD_X = 9, MIN_S = 0.08, MAX_S = 4;
  const el = (tag, cls, parent) => { const e = document.createElement(tag); if (cls) e.className = cls; if (parent) parent.appendChild(e); return e; };
  const sv = (tag, attrs, parent) => {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  };
  if (root._pmCleanup) root._pmCleanup();
  while (root.firstChild) root.removeChild(root.firstChild);
  const style = el("style", null, root);
  style.textContent = PLAN_MAP_CSS;
  const box = el("div", "pm", root);
  const bar = el("div", "pm-bar", box);
  if (data.title) el("span", "pm-title", bar).textContent = data.title;
  const btn = (label, title) => { const b = el("button", "pm-btn", bar); b.type = "button"; b.textContent = label; b.title = title; return b; };
  const zoomOut = btn("\u2212", "Zoom out"), zoomIn = btn("+", "Zoom in"), fitBtn = btn("Fit", "Back to the whole plan");
  const textBtn = data.text && data.text.length ? btn("Plan text", "Spark's plan text beside the drawing, linked to it") : null;
  const tilesBtn = btn("Overview", "The plan as a tree (pan to see it all) or as tiles that fit the window");
  const hint = el("span", "pm-hint", bar);
  const view = el("div", "pm-view", box);
  view.tabIndex = 0;
  const svg = sv("svg", {"class": "pm-svg", "role": "img", "aria-label": data.title || "plan"}, view);
  const world = sv("g", {"class": "pm-world"}, svg);
  const note = el("div", "pm-note", view);
  note.textContent = "Labels are hidden at this zoom: zoom in, or click a box for its details";
  const details = el("div", "pm-details", view);
  const textPanel = el("div", "pm-text", view);
  const legend = el("div", "pm-legend", box);
  const modeNote = el("div", "pm-mode", box);
  box.insertBefore(modeNote, view);

  // ---- the drawing, in layout pixels ------------------------------------------------------
  // a tree layout (the widest that fits the window at the smallest text), else the overview:
  // the boxes as tiles in rows, in data.order: the critical path first
  const byKey = new Map(), byPath = new Map();
  for (const b of data.boxes) { byKey.set(b.key, b); for (const p of b.paths) if (!byPath.has(p)) byPath.set(p, b.key); }
  const edgesG = sv("g", {"class": "pm-edges"}, world), boxesG = sv("g", {"class": "pm-boxes"}, world);
  const rings = sv("g", {"class": "pm-rings"}, world);
  let cur = null, mode = null, forced = null;
  const clear = (g) => { while (g.firstChild) g.removeChild(g.firstChild); };
  function tiles(width) {
    const pos = {}, gap = 14;
    let x = 0, y = 0, rowH = 0, widest = 0;
    for (const k of data.order) {
      const b = byKey.get(k);
      if (x > 0 && x + b.w > width) { x = 0; y += rowH + gap; rowH = 0; }
      pos[k] = [x, y];
      x += b.w + gap; rowH = Math.max(rowH, b.h); widest = Math.max(widest, x - gap);
    }
    return {width: widest, height: y + rowH, pos, edges: []};
  }
  function draw(lay) {
    clear(edgesG); clear(boxesG);
    for (const e of lay.edges) {
      sv("polyline", {"points": e.points.map(p => p.join(",")).join(" "), "class": e.dashed ? "pm-link" : "pm-edge",
                      "stroke": e.dashed ? "#7f7f7f" : data.edgeColor}, edgesG);
    }
    for (const b of data.boxes) {
      const at = lay.pos[b.key];
      if (!at) continue;
      b.x = at[0]; b.y = at[1];
      const g = sv("g", {"class": "pm-box", "data-key": b.key}, boxesG);
      b.changes.forEach((c, i) => {
        const grow = 2 + 2.5 * i;
        sv("rect", {"x": b.x - grow, "y": b.y - grow, "width": b.w + 2 * grow, "height": b.h + 2 * grow, "rx": 4,
                    "class": "pm-change", "stroke": c.color}, g);
      });
      sv("rect", {"x": b.x, "y": b.y, "width": b.w, "height": b.h, "rx": 3, "fill": b.fill, "stroke": b.stroke,
                  "class": "pm-rect"}, g);
      const texts = sv("g", {"class": "pm-label"}, g);
      b.lines.forEach((ln, i) => {
        const t = sv("text", {"x": b.x + b.w / 2, "y": b.y + data.pad + data.line * i + data.line * 0.72,
                              "font-size": data.font, "text-anchor": "middle"}, texts);
        if (ln.bold) t.setAttribute("font-weight", "bold");
        if (ln.color) t.style.fill = ln.color;
        t.textContent = ln.text;
      });
      sv("title", {}, g).textContent = b.lines.map(l => l.text).join("\n");
      b.g = g;
    }
    cur = lay;
  }
  for (const d of data.legend || []) {
    const item = el("span", "pm-legend-item", legend);
    const sw = el("span", "pm-swatch", item);
    sw.style.borderColor = d.color;
    if (!d.outline) sw.style.background = d.color + "33";
    el("span", null, item).textContent = d.label;
  }

  // ---- the view: scale and translation ---------------------------------------------------
  let s = 1, tx = PAD, ty = PAD, engaged = false, userZoomed = false, selected = null, found = new Set(data.highlight || []);
  const minScale = data.minFont / data.font;
  const fits = (lay, w) => lay.width * minScale + 2 * PAD <= w;
  function layoutView() {
    const w = view.clientWidth || 800;
    const tree = data.layouts.find(l => fits(l, w));
    const want = forced === "tree" ? (tree || data.layouts[data.layouts.length - 1]) : (tree && forced !== "tiles" ? tree : "tiles");
    mode = want === "tiles" ? "tiles" : "tree";
    // tiles at full size in rows as wide as the window (a box wider than it is drawn smaller)
    const lay = mode === "tiles" ? tiles(Math.max(w - 2 * PAD, ...data.boxes.map(b => b.w))) : want;
    draw(lay);
    tilesBtn.style.display = tree && forced !== "tiles" ? "none" : "";
    tilesBtn.textContent = mode === "tiles" ? "Tree (pan to see all)" : "Overview";
    s = Math.max(minScale, Math.min(1, (w - 2 * PAD) / Math.max(1, lay.width)));
    const drawn = lay.width * s;
    tx = drawn + 2 * PAD <= w ? (w - drawn) / 2 : PAD;
    ty = PAD;
    view.style.height = Math.ceil(lay.height * s + 2 * PAD) + "px";
    modeNote.textContent = mode === "tiles" ? "Overview: the plan is wider than this window, so its boxes are tiles, " + (data.orderBy || "the longest chain of stages first") + ". Click a box for its details." : "";
    modeNote.style.display = mode === "tiles" ? "block" : "none";
    userZoomed = false;
    drawRings();
    fitLabels();
    apply();
  }
  function apply() {
    world.setAttribute("transform", `translate(${tx},${ty}) scale(${s})`);
    const small = s * data.font < data.minFont - 1e-6;
    svg.classList.toggle("pm-small", small);
    note.style.display = small ? "block" : "none";
    hint.textContent = engaged ? "scroll to zoom \u00b7 drag to pan \u00b7 Esc to let the page scroll"
                               : "click the plan to zoom with the wheel (or hold Ctrl) \u00b7 drag to pan";
    placeDetails();
  }
  function zoomAt(factor, cx, cy) {
    const ns = Math.min(MAX_S, Math.max(MIN_S, s * factor));
    tx = cx - (cx - tx) * (ns / s);
    ty = cy - (cy - ty) * (ns / s);
    s = ns;
    userZoomed = true;
    apply();
  }
  zoomIn.onclick = () => zoomAt(1.25, view.clientWidth / 2, view.clientHeight / 2);
  zoomOut.onclick = () => zoomAt(0.8, view.clientWidth / 2, view.clientHeight / 2);
  fitBtn.onclick = () => layoutView();
  tilesBtn.onclick = () => { forced = mode === "tiles" ? "tree" : "tiles"; layoutView(); };

  // the wheel belongs to the page until the plan is engaged (maps embedded in pages do this)
  const onWheel = (e) => {
    if (!engaged && !(e.ctrlKey || e.metaKey || e.altKey)) return;
    e.preventDefault();
    const r = view.getBoundingClientRect();
    zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
  };
  view.addEventListener("wheel", onWheel, {passive: false});
  const onOutside = (e) => {
    if (!e.composedPath().includes(view) && !e.composedPath().includes(bar)) { engaged = false; view.classList.remove("pm-engaged"); apply(); }
  };
  document.addEventListener("pointerdown", onOutside, true);
  view.addEventListener("keydown", (e) => { if (e.key === "Escape") { engaged = false; view.classList.remove("pm-engaged"); hideDetails(); apply(); } });

  let drag = null;
  view.addEventListener("pointerdown", (e) => {
    if (e.composedPath().includes(details) || e.composedPath().includes(textPanel)) return;
    engaged = true;
    view.classList.add("pm-engaged");
    drag = {x: e.clientX, y: e.clientY, tx, ty, moved: false};
    apply();
  });
  view.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    drag.moved = true;
    tx = drag.tx + dx; ty = drag.ty + dy;
    apply();
  });
  view.addEventListener("pointerup", (e) => {
    const d = drag; drag = null;
    if (!d || d.moved) return;
    const g = e.target.closest ? e.target.closest("[data-key]") : null;
    if (g) select(g.getAttribute("data-key"), true); else hideDetails();
  });

  // ---- selection, details, plan text -----------------------------------------------------
  function drawRings() {
    while (rings.firstChild) rings.removeChild(rings.firstChild);
    const keys = new Set(found);
    if (selected) keys.add(selected);
    for (const k of keys) {
      const b = byKey.get(k);
      if (!b) continue;
      sv("rect", {"x": b.x - 6, "y": b.y - 6, "width": b.w + 12, "height": b.h + 12, "rx": 6, "class": "pm-ring",
                  "stroke": data.highlightColor}, rings);
    }
  }
  function select(key, fromDrawing) {
    selected = key;
    drawRings();
    showDetails(byKey.get(key));
    markLine(key, fromDrawing);
  }
  function hideDetails() { details.style.display = "none"; selected = null; drawRings(); markLine(null, false); }
  function showDetails(b) {
    if (!b) return;
    while (details.firstChild) details.removeChild(details.firstChild);
    const d = b.details;
    const head = el("div", "pm-d-head", details);
    el("b", null, head).textContent = d.title;
    if (d.id !== null && d.id !== undefined) el("span", "pm-d-id", head).textContent = " node " + d.id;
    const close = el("button", "pm-btn pm-d-close", head); close.type = "button"; close.textContent = "\u00d7"; close.title = "Close";
    close.onclick = (e) => { e.stopPropagation(); hideDetails(); };
    if (d.description && d.description !== d.title) el("div", "pm-d-desc", details).textContent = d.description;
    for (const c of d.changes) el("div", "pm-d-change", details).textContent = c;
    const list = el("div", "pm-d-rows", details);
    for (const r of d.rows) el("div", "pm-d-row", list).textContent = r;
    const acts = el("div", "pm-d-acts", details);
    if (b.stage && hooks.onExpand) {
      const open = el("button", "pm-btn", acts); open.type = "button"; open.textContent = "Open this stage's operators";
      open.onclick = (e) => { e.stopPropagation(); hooks.onExpand(b.key); };
    }
    if (textBtn) {
      const line = el("button", "pm-btn", acts); line.type = "button"; line.textContent = "Show in the plan text";
      line.onclick = (e) => { e.stopPropagation(); openText(true); markLine(b.key, true); };
    }
    details.style.display = "block";
    placeDetails();
  }
  function placeDetails() {
    if (!selected || details.style.display !== "block") return;
    const b = byKey.get(selected);
    const vw = view.clientWidth, vh = view.clientHeight, dw = details.offsetWidth, dh = details.offsetHeight;
    const right = tx + (b.x + b.w) * s + 14, left = tx + b.x * s - dw - 14;
    const x = right + dw <= vw ? right : left >= 0 ? left : Math.max(0, vw - dw);
    const y = Math.min(Math.max(0, ty + b.y * s), Math.max(0, vh - dh));
    details.style.left = x + "px";
    details.style.top = y + "px";
  }
  const lineEls = [];
  if (textBtn) {
    data.text.forEach((ln, i) => {
      const d = el("div", "pm-t-line", textPanel);
      d.textContent = ln.text;
      d.dataset.index = String(i);
      const key = ln.path !== null && ln.path !== undefined ? byPath.get(ln.path) : undefined;
      if (key !== undefined) {
        d.classList.add("pm-t-linked");
        d.onclick = (e) => { e.stopPropagation(); select(key, false); reveal(byKey.get(key)); };
      }
      lineEls.push([d, key]);
    });
    textBtn.onclick = () => openText(textPanel.style.display !== "block");
  }
  function openText(on) {
    textPanel.style.display = on ? "block" : "none";
    if (textBtn) textBtn.classList.toggle("pm-on", on);
  }
  function markLine(key, scroll) {
    let first = null;
    for (const [d, k] of lineEls) {
      const on = key !== null && k === key;
      d.classList.toggle("pm-t-on", on);
      if (on && !first) first = d;
    }
    if (first && scroll && textPanel.style.display === "block") textPanel.scrollTop = first.offsetTop - textPanel.clientHeight / 3;
  }
  function reveal(b) {
    if (!b) return;
    const vw = view.clientWidth, vh = view.clientHeight;
    const bx = tx + b.x * s, bw = b.w * s, by = ty + b.y * s, bh = b.h * s;
    if (bx < 0 || bx + bw > vw * 0.6) tx += vw * 0.3 - (bx + bw / 2);
    if (by < 0 || by + bh > vh) ty += vh / 2 - (by + bh / 2);
    apply();
    const r = view.getBoundingClientRect(), top = r.top + ty + b.y * s;
    if (top < 0 || top > window.innerHeight) window.scrollBy({top: top - window.innerHeight / 3});
  }

  // every label inside its box: shrink a line the font measures wider than our estimate
  function fitLabels() {
    for (const b of data.boxes) {
      const room = b.w - 2 * PAD_X + 4;
      for (const t of b.g.querySelectorAll("text")) {
        const w = t.getComputedTextLength();
        if (w > room) { t.setAttribute("textLength", room); t.setAttribute("lengthAdjust", "spacingAndGlyphs"); }
      }
    }
  }
  layoutView();
  let lastW = view.clientWidth;
  const ro = typeof ResizeObserver === "function" ? new ResizeObserver(() => {
    const w = view.clientWidth;
    if (Math.abs(w - lastW) > 1) { lastW = w; if (!userZoomed) layoutView(); else placeDetails(); }
  }) : null;
  if (ro) ro.observe(view);
  if (found.size) { const first = byKey.get(data.highlight[0]); if (first) reveal(first); }
  root._pmCleanup = () => { document.removeEventListener("pointerdown", onOutside, true); if (ro) ro.disconnect(); };
  return {select, scale: () => s, boxes: () => data.boxes, view, svg, details, textPanel, cleanup: root._pmCleanup};
}

const PLAN_MAP_CSS = `
.pm { font-family: Arial, 'Liberation Sans', Helvetica, 'DejaVu Sans', sans-serif; color: #222; }
.pm-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 0 0 4px 0; }
.pm-title { font-size: 15px; font-weight: bold; margin-right: 8px; }
.pm-btn { font: 12px Arial, sans-serif; border: 1px solid #bbb; background: #fff; border-radius: 4px; padding: 2px 8px; cursor: pointer; color: #222; }
.pm-btn:hover, .pm-btn.pm-on { background: #eef4fa; border-color: #0072B2; }
.pm-hint { font-size: 11px; color: #666; }
.pm-view { position: relative; overflow: hidden; border: 1px solid #e3e3e3; border-radius: 4px; background: #fff; cursor: grab; outline: none; touch-action: none; }
.pm-view.pm-engaged { border-color: #0072B2; }
.pm-svg { display: block; width: 100%; height: 100%; user-select: none; }
.pm-svg text { font-family: Arial, 'Liberation Sans', Helvetica, 'DejaVu Sans', sans-serif; fill: #222; }
.pm-svg.pm-small .pm-label { display: none; }
.pm-edge, .pm-link { fill: none; stroke-width: 1.3; vector-effect: non-scaling-stroke; }
.pm-link { stroke-dasharray: 5 4; }
.pm-rect { stroke-width: 1.2; vector-effect: non-scaling-stroke; }
.pm-box { cursor: pointer; }
.pm-box:hover .pm-rect { stroke-width: 2.4; }
.pm-change { fill: none; stroke-width: 3; vector-effect: non-scaling-stroke; }
.pm-ring { fill: none; stroke-width: 4; vector-effect: non-scaling-stroke; }
.pm-note { display: none; position: absolute; left: 8px; top: 8px; background: #fff8d6; border: 1px solid #e0c96b; border-radius: 4px; padding: 3px 8px; font-size: 12px; }
.pm-details { display: none; position: absolute; width: 340px; max-height: 420px; overflow: auto; background: #fff; border: 1px solid #0072B2; border-radius: 6px; box-shadow: 0 2px 10px rgba(0,0,0,.15); padding: 8px 10px; font-size: 12px; cursor: auto; z-index: 2; }
.pm-d-head { display: flex; align-items: baseline; gap: 4px; margin-bottom: 4px; word-break: break-word; }
.pm-d-id { color: #666; }
.pm-d-close { margin-left: auto; }
.pm-d-desc { font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: 11px; white-space: pre-wrap; word-break: break-all; background: #f6f8fa; padding: 4px; border-radius: 3px; max-height: 9em; overflow: auto; margin-bottom: 4px; }
.pm-d-change { color: #9467bd; font-weight: bold; margin: 2px 0; }
.pm-d-row { margin: 1px 0; word-break: break-word; }
.pm-d-acts { display: flex; gap: 6px; flex-wrap: wrap; margin-top: 6px; }
.pm-text { display: none; position: absolute; right: 0; top: 0; width: 42%; height: 100%; overflow: auto; background: #fbfbfb; border-left: 1px solid #ccc; font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: 11px; cursor: auto; z-index: 1; }
.pm-t-line { white-space: pre; padding: 0 6px; line-height: 16px; }
.pm-t-linked { cursor: pointer; }
.pm-t-linked:hover { background: #eef4fa; }
.pm-t-on { background: #fff1b8; }
.pm-mode { display: none; font-size: 12px; color: #444; background: #f1f6fb; border-radius: 4px; padding: 3px 8px; margin-bottom: 4px; }
.pm-legend { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 11px; margin-top: 4px; color: #444; }
.pm-legend-item { display: inline-flex; align-items: center; gap: 4px; }
.pm-swatch { width: 12px; height: 10px; border: 2px solid; border-radius: 2px; display: inline-block; }
`;
