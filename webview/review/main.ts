/**
 * The compaction review editor (an editor-area WebviewPanel). The host owns
 * the session and sends a full `review-state` on ready, then block deltas;
 * this page keeps only UI state (selection, drafts, the texts of dropped
 * blocks, scroll), which VS Code restores after a reload.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import {
  applyBlockProgress,
  compactionOpen,
  indicesHold,
  isSettled,
  type BlockView,
  type CompactionView,
  type ViewMessage,
} from '../../src/protocol/messages';
import { droppedBlockText, type HostToReview, type LossFactView, type ReviewState } from '../../src/protocol/review';
import { button, h, setDisabled, setText } from '../dom';
import { loadUi, post, saveUi } from './api';
import { isDropped } from './format';
import { actionBar, renderLoss, renderNumbers, renderPlan, renderStrip } from './overview';
import { BlockRow, type RowActions } from './row';

const ui = loadUi();
let state: ReviewState | null = null;
let rows: BlockRow[] = [];
let rowsFor = '';
let lossShown: unknown = undefined;

/** Builds a row's originals when it comes within a screen of the viewport. */
const near = new IntersectionObserver(
  (entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      const i = Number((e.target as HTMLElement).dataset.block);
      showRow(i);
    }
  },
  { rootMargin: '900px 0px' },
);

function showRow(i: number): void {
  const r = rows[i];
  if (!r || r.shown || !state) return;
  near.unobserve(r.el);
  r.show(originals(state), lossFor(i));
}

const title = h('h1', { class: 'rv-h1', text: 'Review compaction' });
const sub = h('span', { class: 'muted rv-sub' });
const bar = actionBar(adopt, cancel);
const strip = h('div', { class: 'rv-strip', role: 'group', 'aria-label': 'Timeline: blocks of the head, the split point, the tail' });
const numbers = h('div', { class: 'rv-numbers' });
const plan = h('div', { class: 'rv-plan', role: 'status' });
const keys = h('p', {
  class: 'rv-keys muted',
  text: 'Keys: J / K next and previous block · Enter accept · E edit · R regenerate · D drop or keep · Ctrl+Enter or A adopt · Shift+Escape cancel',
});
const loss = h('section', { class: 'rv-loss', 'aria-label': 'What the summary would lose' });
const list = h('div', { class: 'rv-rows' });
const focusInput = h('input', {
  class: 'rv-compact-focus',
  type: 'text',
  placeholder: 'Focus: what must survive (optional)',
  'aria-label': 'Focus for a new compaction',
});
const compactBtn = button('Compact now', { cls: 'rv-compact' });
const empty = h(
  'section',
  { class: 'rv-empty', hidden: true },
  h('p', {
    text: 'No compaction is open. Start one here, with /compact "focus" in the chat, or by dragging the split point in the side bar.',
  }),
  h('div', { class: 'rv-empty-row' }, focusInput, compactBtn),
);
const top = h(
  'header',
  { class: 'rv-top' },
  h('div', { class: 'rv-titlebar' }, title, sub, bar.el),
  strip,
  h('div', { class: 'rv-meta' }, numbers, plan),
  keys,
);
const toasts = h('div', { class: 'rv-toasts', role: 'status', 'aria-live': 'polite' });
const app = h('main', { class: 'rv' }, top, empty, loss, list);
const root = document.getElementById('root') ?? document.body;
root.textContent = '';
root.append(app, toasts);

compactBtn.addEventListener('click', () => post({ type: 'review-compact', focus: focusInput.value.trim() || null }));
focusInput.addEventListener('keydown', (e) => {
  e.stopPropagation();
  if (e.key === 'Enter') post({ type: 'review-compact', focus: focusInput.value.trim() || null });
});

const key = (b: number) => `${state?.compaction?.id ?? ''}:${b}`;
const save = () => saveUi(ui);

const actions: RowActions = {
  select: (b, focusRow) => select(b, focusRow),
  edit: (b) => rows[b]?.startEdit(ui.drafts[key(b)]),
  save(b, text) {
    const c = state?.compaction;
    if (!c) return;
    delete ui.drafts[key(b)];
    save();
    post({ type: 'review-edit', compactionId: c.id, block: b, text });
  },
  cancelEdit(b) {
    delete ui.drafts[key(b)];
    save();
  },
  regenerate(b, focus) {
    const c = state?.compaction;
    if (c) post({ type: 'review-regenerate', compactionId: c.id, block: b, focus });
  },
  toggleDrop(b) {
    const c = state?.compaction;
    const blk = c?.blocks[b];
    if (!c || !blk) return;
    if (isDropped(blk)) {
      const prev = ui.dropped[key(b)];
      if (prev) post({ type: 'review-edit', compactionId: c.id, block: b, text: prev });
      else post({ type: 'review-regenerate', compactionId: c.id, block: b, focus: null });
      delete ui.dropped[key(b)];
    } else {
      if (blk.summary !== null) ui.dropped[key(b)] = blk.summary;
      post({ type: 'review-edit', compactionId: c.id, block: b, text: droppedBlockText(blk.firstMessage, blk.lastMessage) });
    }
    save();
  },
  draft(b, text) {
    if (text === null) delete ui.drafts[key(b)];
    else ui.drafts[key(b)] = text;
    save();
  },
};

function select(b: number, focusRow: boolean): void {
  const n = rows.length;
  if (n === 0) return;
  const i = Math.max(0, Math.min(n - 1, b));
  const changed = i !== ui.selected;
  ui.selected = i;
  rows.forEach((r, k) => {
    r.el.classList.toggle('selected', k === i);
    r.el.tabIndex = k === i ? 0 : -1;
  });
  for (const s of Array.from(strip.querySelectorAll('.seg-block')))
    s.classList.toggle('selected', s.getAttribute('data-block') === String(i));
  if (focusRow) {
    rows[i]!.el.focus({ preventScroll: true });
    rows[i]!.el.scrollIntoView({ block: 'nearest' });
  }
  if (changed) save();
}

/** Accepts a block's summary as it is now and moves on to the next block. */
function accept(b: number): void {
  const blk = state?.compaction?.blocks[b];
  if (!blk || blk.summary === null) return;
  ui.accepted[key(b)] = blk.summary;
  save();
  rows[b]?.setAccepted(true);
  renderStatus();
  select(b + 1, true);
}

const isAccepted = (b: BlockView) => ui.accepted[key(b.index)] === b.summary && b.summary !== null;

function adopt(): void {
  const c = state?.compaction;
  if (c && canAdopt(c)) post({ type: 'review-adopt', compactionId: c.id });
}

function cancel(): void {
  const c = state?.compaction;
  if (c && isOpen(c)) post({ type: 'review-cancel', compactionId: c.id });
}

const isOpen = compactionOpen;
const canAdopt = (c: CompactionView) => (c.state === 'ready' || c.state === 'held') && c.blocks.every(isSettled);

const STATE_TEXT: Record<CompactionView['state'], string> = {
  running: 'Workers are writing the summaries.',
  ready: 'Every block has a summary: review, then adopt or cancel.',
  judging: 'The judge is checking the summary.',
  held: 'Held for your decision.',
  adopted: 'Adopted. Undo compaction restores the originals.',
  cancelled: 'Cancelled; nothing changed.',
  failed: 'Failed.',
};

function lossFor(b: number): LossFactView[] {
  return state?.loss?.dropped.filter((f) => f.block === b) ?? [];
}

function renderStatus(): void {
  const s = state!;
  const c = s.compaction;
  setText(sub, `${s.sessionTitle}${s.focus ? ` · focus: “${s.focus}”` : ''}`);
  empty.hidden = !!c && isOpen(c);
  if (!c) {
    setText(bar.state, '');
  } else {
    const ready = c.blocks.filter(isSettled).length;
    const accepted = isOpen(c) ? c.blocks.filter(isAccepted).length : 0;
    // A closed compaction's note says how it ended ("Cancelled; nothing was adopted."): said once, not after the state.
    const said = c.note && !isOpen(c) && c.state !== 'adopted' ? '' : STATE_TEXT[c.state];
    setText(
      bar.state,
      `${said}${c.state === 'running' ? ` ${ready}/${c.blocks.length} ready.` : ''}` +
        `${accepted ? ` ${accepted}/${c.blocks.length} accepted.` : ''}${c.note ? `${said ? ' ' : ''}${c.note}` : ''}`,
    );
  }
  setDisabled(bar.adopt, !c || !canAdopt(c));
  setDisabled(bar.cancel, !c || !isOpen(c));
  renderStrip(strip, s, ui.selected, (b) => select(b, true));
  if (c) renderNumbers(numbers, c);
  else numbers.textContent = '';
  renderPlan(plan, s.plan);
  if (s.loss === lossShown) return;
  lossShown = s.loss;
  renderLoss(loss, s.loss, {
    reveal: (f) => {
      select(f.block, false);
      showRow(f.block);
      rows[f.block]?.reveal(f.messageId, f.key);
    },
    pin: (f) => post({ type: 'review-pin', text: f.text, messageId: f.messageId }),
    refocus: (f) => {
      select(f.block, false);
      showRow(f.block);
      rows[f.block]?.openRegenerate(`keep ${f.key}`);
    },
  });
}

function renderRows(): void {
  const s = state!;
  const c = s.compaction;
  const id = c ? `${c.id}/${c.blocks.length}` : '';
  if (id !== rowsFor) {
    rowsFor = id;
    list.textContent = '';
    near.disconnect();
    rows = (c?.blocks ?? []).map((b) => new BlockRow(b, actions));
    const frag = document.createDocumentFragment();
    for (const r of rows) frag.append(r.el);
    list.append(frag);
    for (const r of rows) {
      near.observe(r.el);
      const d = ui.drafts[key(r.block.index)];
      if (d !== undefined) r.startEdit(d, false);
    }
    select(ui.selected, false);
  }
  if (!c) return;
  for (const r of rows) {
    const b = c.blocks[r.block.index]!;
    r.setOpen(isOpen(c));
    if (b !== r.block) r.update(b);
    r.setAccepted(isAccepted(b));
    r.renderOriginals(originals(s), lossFor(b.index), c.state === 'adopted');
  }
}

/** The messages the blocks' indices point into; none once the context changed under them (adopted: archived). */
function originals(s: ReviewState): readonly ViewMessage[] {
  return s.compaction && !indicesHold(s.compaction, s.split) ? [] : s.messages;
}

function onMessage(msg: HostToReview): void {
  switch (msg.type) {
    case 'review-state': {
      const t0 = performance.now();
      const first = state === null;
      state = msg.state;
      renderRows();
      renderStatus();
      if (first && ui.scrollTop > 0) document.scrollingElement?.scrollTo(0, ui.scrollTop);
      performance.measure('splitpoint:review-render', { start: t0, end: performance.now() });
      return;
    }
    case 'review-block': {
      const c = state?.compaction;
      if (!state || !c || c.id !== msg.compactionId) return;
      state.compaction = { ...c, blocks: c.blocks.map((b) => (b.index === msg.block.index ? msg.block : b)) };
      state.loss = msg.loss;
      rows[msg.block.index]?.update(msg.block);
      rows[msg.block.index]?.setAccepted(isAccepted(msg.block));
      for (const r of rows) r.renderOriginals(originals(state), lossFor(r.block.index), state.compaction?.state === 'adopted');
      renderStatus();
      return;
    }
    case 'review-progress': {
      const c = state?.compaction;
      if (!state || !c || c.id !== msg.compactionId) return;
      state.compaction = { ...c, blocks: applyBlockProgress(c.blocks, msg.progress) };
      // Only the rows that changed repaint; no summary changed, so the originals and the loss report stand.
      for (const p of msg.progress) {
        const b = state.compaction.blocks.find((x) => x.index === p.index);
        if (b) rows[b.index]?.update(b);
      }
      renderStatus();
      return;
    }
    case 'review-notice': {
      const t = h('div', { class: `rv-toast toast-${msg.level}`, role: msg.level === 'error' ? 'alert' : null, text: msg.text });
      toasts.append(t);
      setTimeout(() => t.remove(), msg.level === 'error' ? 15000 : 6000);
      return;
    }
  }
}

/** A row's own controls keep their keys: Enter on Edit presses Edit. */
const CONTROLS = 'vscode-button, button, a[href], summary, select';

/**
 * Whether the row keys (Enter, the arrows, Home, End) are for the selected row: focus is on it, or anywhere in it but
 * a control (a click in a summary focuses that region, and the row took it for the selection). `moves` is false where
 * the focus is a region taller than its box: it is focusable so the keyboard can scroll it, and the arrows do that.
 */
function rowKeys(row: BlockRow | undefined, t: HTMLElement | null): { onRow: boolean; moves: boolean } {
  if (!t || t === document.body || t.classList.contains('seg-block') || (row && t === row.el)) return { onRow: !!t, moves: !!t };
  if (!row || !row.el.contains(t) || t.closest(CONTROLS)) return { onRow: false, moves: false };
  return { onRow: true, moves: t.scrollHeight <= t.clientHeight };
}

document.addEventListener('keydown', (e) => {
  const t = e.target as HTMLElement | null;
  if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.isContentEditable)) return;
  const c = state?.compaction;
  const row = rows[ui.selected];
  const { onRow, moves } = rowKeys(row, t);
  let handled = true;
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) adopt();
  else if (e.key === 'Escape' && e.shiftKey) cancel();
  else if (e.ctrlKey || e.metaKey || e.altKey) handled = false;
  else if (e.key === 'j' || e.key === 'n' || (moves && e.key === 'ArrowDown')) select(ui.selected + 1, true);
  else if (e.key === 'k' || e.key === 'p' || (moves && e.key === 'ArrowUp')) select(ui.selected - 1, true);
  else if (moves && e.key === 'Home') select(0, true);
  else if (moves && e.key === 'End') select(rows.length - 1, true);
  else if ((e.key === 'Enter' || e.key === 'y') && onRow && row && c) accept(ui.selected);
  else if (e.key === 'e' && row && c && isOpen(c)) actions.edit(ui.selected);
  else if (e.key === 'r' && row && c && isOpen(c)) {
    showRow(ui.selected);
    row.openRegenerate();
  } else if (e.key === 'd' && row && c && isOpen(c)) actions.toggleDrop(ui.selected);
  else if (e.key === 'a' && c) adopt();
  else handled = false;
  if (handled) e.preventDefault();
});

let scrollPending = 0;
window.addEventListener('scroll', () => {
  if (scrollPending) return;
  scrollPending = requestAnimationFrame(() => {
    scrollPending = 0;
    ui.scrollTop = document.scrollingElement?.scrollTop ?? 0;
    save();
  });
});

window.addEventListener('message', (e: MessageEvent) => {
  const data = e.data as HostToReview | undefined;
  if (!data || typeof data !== 'object' || typeof (data as { type?: unknown }).type !== 'string') return;
  try {
    onMessage(data);
  } catch (err) {
    console.error('[splitpoint review] failed to handle', data.type, err);
  }
});

post({ type: 'review-ready' });
