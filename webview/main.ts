/**
 * Splitpoint webview entry. The host owns session state and sends a snapshot
 * on `ready` / `visible`, then deltas; this file routes them to the views.
 * Only UI state (scroll, selection, drag position, history) is kept here,
 * persisted with the VS Code state API.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import type { HostToWebview, HostToWebviewPost } from '../src/protocol/messages';
import type { Ctx } from './ctx';
import { h } from './dom';
import { Model, type Dirty } from './model';
import { compactionAt, compactionProjection, nearestAllowedByIndex, project, type Projection } from './projection';
import { DEFAULT_UI, loadUi, post, saveUi } from './vscodeApi';
import { Chat } from './views/chat';
import { CompactionPanel } from './views/compaction';
import { Composer } from './views/composer';
import { Gauges } from './views/gauges';
import { Header } from './views/header';
import { Overview } from './views/overview';
import { Pins } from './views/pins';
import { Timeline } from './views/timeline';

const model = new Model();
const ui = loadUi();
let projCache: { tail: number; prefix: unknown; gauge: unknown; split: unknown; p: Projection } | null = null;

const ctx: Ctx = {
  model,
  ui,
  save: (now) => saveUi(ui, now),
  tail() {
    const s = model.snap;
    if (!s) return 0;
    return ui.dragTail ?? s.split.tailStartIndex;
  },
  movedTail() {
    const s = model.snap;
    return s && ui.dragTail !== null && ui.dragTail !== s.split.tailStartIndex ? ui.dragTail : null;
  },
  setTail(tail) {
    ui.dragTail = tail;
    ui.dragVersion = tail === null ? null : (model.snap?.split.version ?? null);
    timeline.positionHandle();
    gauges.update();
    overview.update();
    saveUi(ui);
  },
  projection() {
    const s = model.snap!;
    const tail = ctx.tail();
    const c = projCache;
    let estimate: Projection;
    if (c && c.tail === tail && c.prefix === model.prefix && c.gauge === s.gauge && c.split === s.split) estimate = c.p;
    else {
      estimate = project(model.prefix, s.gauge, s.split, tail);
      projCache = { tail, prefix: model.prefix, gauge: s.gauge, split: s.split, p: estimate };
    }
    // At the open compaction's split the figures are its own (what Adopt does); its blocks change in place, so not cached.
    const at = compactionAt(s.compaction, s.split.version, tail);
    return at ? compactionProjection(at, s.gauge.used, estimate) : estimate;
  },
  selectMessage(index, opts = {}) {
    const m = model.snap?.messages[index];
    if (!m) return;
    const prev = ui.selectedId;
    ui.selectedId = m.id;
    saveUi(ui);
    timeline.onSelection(index);
    if (opts.reveal || opts.focusChat) chat.reveal(index, opts.focusChat);
    else chat.refreshSelection(prev);
  },
  selectBlock(index) {
    ui.selectedBlock = index;
    saveUi(ui);
    compaction.renderPreview();
    timeline.draw();
  },
  expandSummary(id) {
    const i = ui.expanded.indexOf(id);
    if (i >= 0) ui.expanded.splice(i, 1);
    else {
      ui.expanded.push(id);
      if (!model.archived.has(id)) post({ type: 'expand-summary', summaryId: id });
    }
    saveUi(ui);
    const idx = model.snap?.messages.findIndex((m) => m.id === id) ?? -1;
    if (idx >= 0) chat.reveal(idx);
    chat.refreshMessage(id);
  },
  notify(level, text) {
    toast(level, text);
  },
  pinText(text, messageId) {
    post({ type: 'pin', text, kind: ui.pinKind, messageId });
  },
};

const header = new Header(ctx);
const pins = new Pins(ctx);
const timeline = new Timeline(ctx);
const gauges = new Gauges(ctx);
const compaction = new CompactionPanel(ctx);
const chat = new Chat(ctx);
const composer = new Composer(ctx);
const toasts = h('div', { class: 'toasts', role: 'status', 'aria-live': 'polite' });
const alerts = h('div', { class: 'toasts alerts', role: 'alert' });
const empty = h('div', { class: 'empty-state', text: 'Connecting to the Splitpoint host…' });

const overview = new Overview(ctx, [timeline.el, gauges.el], (open) => {
  if (!open || !model.snap) return;
  timeline.render();
  gauges.update();
});
const welcome = h(
  'div',
  { class: 'welcome', hidden: true },
  h('p', {
    text: 'Type a task below; the agent works in this workspace against your own server and asks before it edits or runs anything.',
  }),
  h('p', {
    text: 'Later, type /compact "what must survive", drag the split point on the timeline, and review the summary before adopting it (Undo restores it).',
  }),
);
const top = h('div', { class: 'top' }, header.el, overview.el, compaction.el, pins.el);
const app = h('main', { class: 'app', hidden: true }, top, welcome, chat.el, composer.el);
const root = document.getElementById('root') ?? document.body;
root.textContent = '';
const notices = h('div', { class: 'notices' }, alerts, toasts);
root.append(empty, app, notices);

function toast(level: 'info' | 'warning' | 'error', text: string): void {
  const t = h('div', { class: `toast toast-${level}` }, h('span', { text }));
  const close = h('button', { class: 'link-btn', type: 'button', 'aria-label': 'Dismiss notification', text: '✕' });
  close.addEventListener('click', () => t.remove());
  t.append(close);
  // An error said while the server could not be reached is that failure's: it goes once the server answers again.
  if (level === 'error' && model.snap?.connection.state === 'error') t.dataset.connection = 'true';
  // Just above the composer, over the chat's last lines: not over Send, nor over the header's Undo, the row or the
  // panel's controls, which may be scrolled anywhere (a layout read, once per notice).
  notices.style.bottom = `${Math.max(8, Math.round(window.innerHeight - composer.el.getBoundingClientRect().top) + 4)}px`;
  // A newer notice supersedes an older one ("Compacted … Undo restores" beside "Undid the last compaction").
  if (level !== 'error') toasts.replaceChildren();
  (level === 'error' ? alerts : toasts).append(t);
  // The host's answer to a /compact that started nothing (kept, already running, nothing to compact) is a notice.
  composer.noticeArrived();
  if (level !== 'error') setTimeout(() => t.remove(), 8000);
  while (toasts.childElementCount > 4) toasts.firstElementChild?.remove();
  while (alerts.childElementCount > 3) alerts.firstElementChild?.remove();
}

/** The server answers again: the alerts about its failure no longer hold, and covered the header until closed by hand. */
function clearConnectionAlerts(): void {
  if (model.snap?.connection.state !== 'ok') return;
  for (const a of [...alerts.querySelectorAll<HTMLElement>('[data-connection="true"]')]) a.remove();
}

function renderAll(): void {
  empty.hidden = true;
  app.hidden = false;
  header.render();
  pins.render();
  timeline.render();
  gauges.update();
  overview.update();
  compaction.render();
  chat.render();
  composer.render();
  renderWelcome();
}

/** The empty state: two lines on what to do first, until the session has a message of the user's. */
function renderWelcome(): void {
  welcome.hidden = !!model.snap?.messages.some((m) => m.role === 'user' && m.kind === 'normal');
}

function route(d: Dirty): void {
  clearConnectionAlerts();
  if (d.all) return renderAll();
  if (d.splitReset) {
    ui.dragTail = null;
    ui.dragVersion = null;
    saveUi(ui);
  }
  // One timeline paint per message: a split change re-renders it below, which paints too.
  if (d.messages === 'reset') {
    chat.render();
    if (!d.split) timeline.render();
  } else if (d.messages === 'append') {
    chat.append();
    if (!d.split) timeline.drawNow();
  }
  if (d.split) {
    timeline.render();
    header.render();
  }
  if (d.gauge || d.split || d.messages) {
    timeline.positionHandle();
    gauges.update();
    overview.update();
  }
  if (d.messages) renderWelcome();
  if (d.streaming) chat.renderStreaming();
  if (d.agent) composer.render();
  if (d.compaction) {
    overview.update();
    compaction.render();
    header.render();
    composer.render();
    timeline.positionHandle();
    timeline.draw();
  }
  if (d.blocks) {
    for (const i of d.blocks) compaction.renderBlock(i);
    timeline.draw();
  }
  if (d.approvals) chat.renderApprovals();
  if (d.pins) pins.render();
  if (d.archived) chat.refreshMessage(d.archived);
  if (d.notice) toast(d.notice.level, d.notice.text);
}

function onMessage(msg: HostToWebview): void {
  const t0 = performance.now();
  if (msg.type === 'snapshot') {
    // Keep a drag that is still a legal position in the new snapshot; otherwise follow the strategy.
    const s = msg.snapshot;
    if (ui.sessionId !== s.session.id) {
      // Another session: UI state of the old one does not apply; the layout the user chose (the row and the pins
      // opened or closed, which stay so on screen) does.
      const { history, pinKind, zoom, overviewOpen, pinsOpen } = ui;
      Object.assign(ui, { ...DEFAULT_UI, history, pinKind, zoom, overviewOpen, pinsOpen, sessionId: s.session.id });
    }
    // A drag placed on another version of the context (a compaction adopted or undone, the pinned block added) names other messages.
    const sameVersion = ui.dragVersion === null || ui.dragVersion === s.split.version;
    const keep =
      ui.dragTail !== null && sameVersion && s.split.allowed[nearestAllowedByIndex(s.split.allowed, ui.dragTail)] === ui.dragTail;
    const drag = ui.dragTail;
    const d = model.apply(msg);
    ui.dragTail = keep ? drag : null;
    if (!keep && drag !== null) {
      ui.dragVersion = null;
      saveUi(ui);
    }
    if (ui.selectedBlock !== null && !s.compaction?.blocks.some((b) => b.index === ui.selectedBlock)) ui.selectedBlock = null;
    route(d);
    performance.measure('splitpoint:render-snapshot', { start: t0, end: performance.now() });
    return;
  }
  const d = model.apply(msg);
  route(d);
}

window.addEventListener('message', (e: MessageEvent) => {
  const data = e.data as HostToWebviewPost | undefined;
  if (!isMessage(data)) return;
  if (data.type !== 'batch') return handleSafely(data);
  // One turn of the host's messages, in order; one that fails does not keep the rest from the view.
  if (Array.isArray(data.messages)) for (const m of data.messages) if (isMessage(m)) handleSafely(m);
});

function isMessage<T extends { type: string }>(x: T | undefined): x is T {
  return !!x && typeof x === 'object' && typeof (x as { type?: unknown }).type === 'string';
}

function handleSafely(msg: HostToWebview): void {
  try {
    onMessage(msg);
  } catch (err) {
    console.error('[splitpoint] failed to handle', msg.type, err);
    toast('error', `View error while handling ${msg.type}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

// The view came back (e.g. the panel was re-shown without a reload): ask for fresh state.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && model.snap) post({ type: 'visible' });
});

post({ type: 'ready' });
