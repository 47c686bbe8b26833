import { formatTokens, indicesHold, summaryTokens, type CompactionView } from '../../src/protocol/messages';
import { blockStatusWord } from '../../src/protocol/runningText';
import {
  droppedCount,
  excerptAround,
  kindLabel,
  lossHeadline,
  type FactKindView,
  type LossFactView,
  type LossReportView,
  type PlanCandidateView,
  type PlanView,
  type ReviewState,
} from '../../src/protocol/review';
import { button, clear, h } from '../dom';
import { deviation, workerTotalsText } from '../projection';
import { formatMs, isDropped } from './format';

/**
 * The timeline, full width: what precedes the head, one segment per block
 * (width by the block's own tokens) and the tail, with the split point
 * between head and tail. Blocks are buttons: click or Enter selects.
 */
export function renderStrip(into: HTMLElement, s: ReviewState, selected: number, select: (b: number) => void): void {
  clear(into);
  const c = s.compaction;
  const total = s.messages.reduce((a, m) => a + m.tokens, 0) || 1;
  const seg = (cls: string, tokens: number, label: string, text = '') => {
    const el = h('div', { class: `rv-seg ${cls}`, title: label, text });
    el.style.flexGrow = String(Math.max(tokens, total / 400));
    return el;
  };
  if (!c || !indicesHold(c, s.split)) {
    into.append(seg('seg-tail', total, `${formatTokens(total)} tokens${c ? '' : ', no compaction open'}`));
    return;
  }
  const first = c.blocks[0]?.firstMessage ?? 0;
  const last = c.blocks[c.blocks.length - 1]?.lastMessage ?? -1;
  const before = s.messages.slice(0, first).reduce((a, m) => a + m.tokens, 0);
  const after = s.messages.slice(last + 1).reduce((a, m) => a + m.tokens, 0);
  if (before > 0) into.append(seg('seg-pre', before, `System prompt, pins and earlier summaries: ${formatTokens(before)} tokens, kept`));
  for (const b of c.blocks) {
    const dropped = isDropped(b);
    const el = seg(
      `seg-block st-${dropped ? 'dropped' : b.status}${b.index === selected ? ' selected' : ''}`,
      b.tokens,
      '',
      String(b.index + 1),
    );
    el.setAttribute('role', 'button');
    el.setAttribute('tabindex', '-1');
    el.setAttribute('data-block', String(b.index));
    el.setAttribute('aria-label', `Block ${b.index + 1}, ${formatTokens(b.tokens)} tokens, ${dropped ? 'dropped' : blockStatusWord(b)}`);
    el.title = `Block ${b.index + 1}: messages ${b.firstMessage}–${b.lastMessage}, ${formatTokens(b.tokens)} tokens`;
    el.addEventListener('click', () => select(b.index));
    into.append(el);
  }
  into.append(
    h('div', {
      class: 'rv-split',
      role: 'img',
      'aria-label': `Split point: the tail starts at message ${last + 1}`,
      title: `Split point · tail starts at message ${last + 1}`,
    }),
  );
  into.append(seg('seg-tail', after, `Tail, kept verbatim: ${formatTokens(after)} tokens`));
}

/** Honest numbers: each says what it counts. Worker prompt sizes are not here (they are per block, under "Worker details"). */
export function renderNumbers(into: HTMLElement, c: CompactionView): void {
  clear(into);
  const ready = c.blocks.filter((b) => b.summary !== null);
  // Once complete, the merged summary message is what enters the context (block summaries plus their part headers),
  // the same count the side bar shows; while blocks run, the finished blocks' own summaries.
  const merged = c.totals?.summaryTokens ?? null;
  const sumTok = merged ?? ready.reduce((a, b) => a + (summaryTokens(b)?.n ?? 0), 0);
  const estimate = merged === null && ready.some((b) => summaryTokens(b)?.estimate);
  const complete = ready.length === c.blocks.length;
  const item = (label: string, value: string, title: string) =>
    h('div', { class: 'rv-num', title }, h('span', { class: 'muted', text: label }), h('strong', { text: value }));
  into.append(
    item('Head', `${formatTokens(c.headTokens)} tok`, 'Tokens of the messages this compaction replaces (the head, before the split point)'),
    item(
      complete ? 'Summary' : `Summary (${ready.length}/${c.blocks.length} blocks)`,
      `${estimate ? '≈' : ''}${formatTokens(sumTok)} tok`,
      merged !== null
        ? 'Tokens of the summary message that replaces the head (the block summaries with their part headers)'
        : 'Tokens of the summaries written so far; ≈ when a hand-edited block is estimated at 4 characters per token',
    ),
    item(
      'Ratio',
      complete && sumTok > 0 ? `${(c.headTokens / sumTok).toFixed(1)}×` : '—',
      'Head tokens ÷ summary tokens, once every block has a summary',
    ),
  );
  if (c.totals) {
    into.append(
      h('details', { class: 'rv-cache' }, h('summary', { text: 'Workers and cache' }), h('p', { text: `${workerTotalsText(c.totals)}.` })),
    );
  }
}

export function renderPlan(into: HTMLElement, p: PlanView | null): void {
  clear(into);
  into.hidden = !p;
  if (!p) return;
  const parts = [
    p.mode,
    p.layout,
    p.blockTokens ? `${formatTokens(p.blockTokens)}-token blocks` : '',
    p.concurrency ? `${p.concurrency} at once` : '',
  ].filter(Boolean);
  const pred = p.predictedMs !== null ? `predicted ${formatMs(p.predictedMs)}` : 'no prediction';
  const meas = p.measuredMs !== null ? `measured ${formatMs(p.measuredMs)}` : 'running';
  const diff = p.predictedMs !== null && p.measuredMs !== null ? ` (${deviation(p.measuredMs, p.predictedMs)})` : '';
  into.append(h('span', { class: 'rv-plan-main', text: `Plan: ${parts.length ? `${parts.join(' · ')} — ` : ''}${pred}, ${meas}${diff}` }));
  if (p.candidates.length > 0) {
    const list = h('ul', { class: 'rv-candidates' });
    // An option ruled out before it was simulated has no time: listed last rather than as the fastest.
    const time = (c: PlanCandidateView) => c.predictedMs ?? Infinity;
    for (const c of [...p.candidates].sort((a, b) => time(a) - time(b) || 0)) {
      const shown = c.predictedMs !== null ? formatMs(c.predictedMs) : 'no prediction';
      list.append(h('li', { class: c.chosen ? 'chosen' : '', text: `${c.chosen ? '✓ ' : ''}${c.label}: ${shown}` }));
    }
    into.append(h('details', { class: 'rv-alts' }, h('summary', { text: `${p.candidates.length} plans considered` }), list));
  }
}

export interface LossActions {
  reveal(f: LossFactView): void;
  pin(f: LossFactView): void;
  refocus(f: LossFactView): void;
}

const PER_KIND = 40;

/** "Dropped 7 of 212 facts: 3 identifiers, 2 error lines", then each fact: go to it, pin it, or regenerate its block with it in focus. */
export function renderLoss(into: HTMLElement, r: LossReportView | null, a: LossActions): void {
  clear(into);
  into.hidden = !r;
  if (!r) return;
  const head = h('h2', { class: 'rv-loss-head', text: lossHeadline(r) });
  into.append(head);
  if (r.source === 'identifiers')
    into.append(
      h('p', { class: 'muted', text: 'Identifiers, paths and error names only; checked by exact match in the block’s summary.' }),
    );
  // Every kind that lost a fact, counted whole; its listed facts (a very long output has only its first ones listed).
  const groups = new Map<FactKindView, LossFactView[]>((Object.keys(r.droppedByKind) as FactKindView[]).map((k) => [k, []]));
  for (const f of r.dropped) groups.get(f.kind)?.push(f);
  const open = droppedCount(r) <= 12;
  for (const [kind, facts] of groups) {
    const count = r.droppedByKind[kind] ?? facts.length;
    const shown = Math.min(facts.length, PER_KIND);
    const list = h('ul', { class: 'rv-facts' });
    const fill = () => {
      if (list.firstChild) return;
      for (const f of facts.slice(0, PER_KIND)) {
        const go = h('button', { class: 'link-btn rv-fact', type: 'button', title: 'Show it in the original message', text: f.key });
        go.addEventListener('click', () => a.reveal(f));
        const pin = h('button', {
          class: 'link-btn rv-keep-pin',
          type: 'button',
          text: 'Keep this (pin)',
          'aria-label': `Keep this (pin): ${f.key}`,
        });
        pin.addEventListener('click', () => a.pin(f));
        const refocus = h('button', {
          class: 'link-btn rv-keep-regen',
          type: 'button',
          text: `Regenerate block ${f.block + 1} with it`,
          'aria-label': `Regenerate block ${f.block + 1} with it: ${f.key}`,
        });
        refocus.addEventListener('click', () => a.refocus(f));
        // For lines and statements the key alone does not say what was lost: show the line, shortened around the key.
        const line = f.text !== f.key ? ` “${excerptAround(f.text, f.key, 90)}”` : '';
        list.append(
          h(
            'li',
            null,
            go,
            h('span', { class: 'muted', text: `${line} block ${f.block + 1}, message #${f.messageIndex} · ` }),
            pin,
            ' · ',
            refocus,
          ),
        );
      }
      if (count > shown) list.append(h('li', { class: 'muted', text: `… and ${count - shown} more` }));
    };
    // A closed kind builds its list when opened: hundreds of facts cost nothing until someone looks.
    const d = h('details', { class: 'rv-kind', open }, h('summary', { text: `${count} ${kindLabel(kind, count)}` }), list);
    if (open) fill();
    else d.addEventListener('toggle', fill);
    into.append(d);
  }
}

export function actionBar(
  onAdopt: () => void,
  onCancel: () => void,
): { el: HTMLElement; adopt: HTMLElement; cancel: HTMLElement; state: HTMLElement } {
  const adopt = button('Adopt', { cls: 'rv-adopt', title: 'Adopt the whole summary (Ctrl+Enter or A)' });
  const cancel = button('Cancel', { secondary: true, cls: 'rv-cancel', title: 'Discard this compaction; nothing changes (Shift+Escape)' });
  const state = h('span', { class: 'rv-state', role: 'status' });
  adopt.addEventListener('click', onAdopt);
  cancel.addEventListener('click', onCancel);
  return { el: h('div', { class: 'rv-actions' }, state, h('span', { class: 'spacer' }), adopt, cancel), adopt, cancel, state };
}
