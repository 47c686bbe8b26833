/**
 * The block overlay: the partition of the head while a compaction runs, each
 * block's status, a preview of the selected block's summary with edit and
 * regenerate, Adopt / Cancel, checks, the judge's verdict, and Undo.
 */
import {
  formatTokens,
  indicesHold,
  compactionOpen,
  isSettled,
  summaryTokens,
  type BlockView,
  type CompactionView,
  type VerdictView,
} from '../../src/protocol/messages';
import { awaitingFirstTokens, blockStatusWord, runningSummaryText } from '../../src/protocol/runningText';
import type { Ctx } from '../ctx';
import { button, clear, h, setDisabled, setText } from '../dom';
import { fillMarkdown, summaryMarkdown } from '../markdown';
import { renderPlan } from './compactionPlan';

import { post } from '../vscodeApi';
import { blockSummaryTokens, meter } from './gauges';
import { renderLoss } from './lossLine';

export class CompactionPanel {
  readonly el: HTMLElement;
  private title = h('h2', { class: 'cp-title' });
  private stateBadge = h('vscode-badge', { class: 'cp-state' });
  private meta = h('div', { class: 'cp-meta' });
  private verdict = h('div', { class: 'verdict-slot' });
  private checks = h('div', { class: 'cp-checks' });
  private grid = h('div', {
    class: 'cp-blocks',
    role: 'listbox',
    'aria-label': 'Summary blocks',
    'aria-orientation': 'horizontal',
    tabindex: -1,
  });
  private preview = h('div', { class: 'cp-preview', 'aria-live': 'polite' });
  private adopt = button('Adopt', { title: 'Replace the head with these summaries (undoable)', cls: 'cp-adopt' });
  private cancel = button('Cancel', { secondary: true, title: 'Discard this compaction', cls: 'cp-cancel' });
  private dismiss = button('Dismiss', { secondary: true, cls: 'cp-dismiss' });
  private review = button('Review', {
    secondary: true,
    cls: 'cp-review',
    title: 'Open the review editor: each block next to its originals, with what would be lost',
  });
  private plan = h('div', { class: 'cp-plan' });
  private loss = h('div', { class: 'cp-loss', 'aria-live': 'polite', hidden: true });
  private chips = new Map<number, HTMLElement>();
  private editing: { block: number; text: string } | null = null;
  private dismissedId: string | null = null;

  constructor(private ctx: Ctx) {
    this.adopt.addEventListener('click', () => {
      const c = this.ctx.model.snap?.compaction;
      if (c) post({ type: 'compaction-adopt', compactionId: c.id });
    });
    this.cancel.addEventListener('click', () => {
      const c = this.ctx.model.snap?.compaction;
      if (c) post({ type: 'compaction-cancel', compactionId: c.id });
    });
    this.dismiss.addEventListener('click', () => {
      this.dismissedId = this.ctx.model.snap?.compaction?.id ?? null;
      this.render();
    });
    this.review.addEventListener('click', () => post({ type: 'open-review' }));
    this.grid.addEventListener('keydown', (e) => this.gridKeys(e));
    this.el = h(
      'section',
      { class: 'compaction', 'aria-label': 'Compaction preview', hidden: true },
      h(
        'div',
        { class: 'cp-head' },
        this.title,
        this.stateBadge,
        h('span', { class: 'spacer' }),
        this.review,
        this.adopt,
        this.cancel,
        this.dismiss,
      ),
      this.meta,
      this.plan,
      this.verdict,
      this.grid,
      this.checks,
      this.loss,
      this.preview,
    );
  }

  render(): void {
    const c = this.ctx.model.snap?.compaction ?? null;
    if (!c || c.id === this.dismissedId) {
      this.el.hidden = true;
      this.chips.clear();
      clear(this.grid);
      return;
    }
    this.el.hidden = false;
    setText(this.title, c.background ? 'Background compaction' : 'Compaction');
    this.renderHeader(c);
    // Rebuild chips only when the partition changed.
    const key = c.blocks.map((b) => b.index).join(',');
    if (this.grid.dataset.key !== key || this.grid.dataset.cid !== c.id) {
      this.grid.dataset.key = key;
      this.grid.dataset.cid = c.id;
      clear(this.grid);
      this.chips.clear();
      for (const b of c.blocks) {
        const chip = h('button', { class: 'cp-chip', type: 'button', role: 'option', 'data-block': b.index, tabindex: -1 });
        chip.addEventListener('click', () => this.ctx.selectBlock(b.index));
        this.chips.set(b.index, chip);
        this.grid.append(chip);
      }
    }
    for (const b of c.blocks) this.renderChip(b);
    this.fixTabStop(c);
    this.renderPreview();
  }

  /** One block changed (a `block` delta): repaint its chip, the header counts, and the preview if it is the selected one. */
  renderBlock(index: number): void {
    const c = this.ctx.model.snap?.compaction;
    if (!c || this.el.hidden) return this.render();
    const b = c.blocks.find((x) => x.index === index);
    if (!b || !this.chips.has(index)) return this.render();
    this.renderChip(b);
    this.renderHeader(c);
    if (this.ctx.ui.selectedBlock === index) this.renderPreview();
  }

  private renderHeader(c: CompactionView): void {
    setText(this.stateBadge, c.state);
    this.stateBadge.className = `cp-state state-${c.state}`;
    const done = c.blocks.filter(isSettled).length;
    const failed = c.blocks.filter((b) => b.status === 'failed').length;
    const parts = [`${done}/${c.blocks.length} blocks ready`, `head ${formatTokens(c.headTokens)} tok`];
    if (failed) parts.push(`${failed} failed`);
    if (c.totals) parts.push(summaryPart(c.totals.summaryTokens, c.blocks, c.headingTokens));
    clear(this.meta);
    this.meta.append(h('span', { text: parts.join(' · ') }));
    if (c.focus) this.meta.append(h('span', { class: 'focus-chip', title: 'Focus for this compaction', text: `focus: ${c.focus}` }));
    if (c.note)
      this.meta.append(
        h('div', { class: `cp-note ${c.state === 'failed' ? 'error' : ''}`, role: c.state === 'failed' ? 'alert' : null, text: c.note }),
      );
    renderPlan(this.plan, c);
    clear(this.verdict);
    if (c.verdict) this.verdict.append(verdictView(c.verdict));
    clear(this.checks);
    if (c.checks) {
      const ck = c.checks;
      if (ck.missingPins.length)
        this.checks.append(h('div', { class: 'check bad', role: 'alert', text: `Missing pinned items: ${ck.missingPins.join('; ')}` }));
      if (ck.grows)
        this.checks.append(
          h('div', {
            class: 'check bad',
            role: 'alert',
            text: 'The summary is not smaller than what it replaces: adopting it would grow the context. Try larger blocks or a later split.',
          }),
        );
      this.checks.append(
        h('div', {
          class: `check ${ck.openLoopsDropped ? 'bad' : 'ok'}`,
          text:
            ck.openLoopsAfter === null
              ? `Open loops ${ck.openLoopsBefore} → not counted (the summary's sections are not named OPEN, FACTS…)`
              : `Open loops ${ck.openLoopsBefore} → ${ck.openLoopsAfter}${ck.openLoopsDropped ? ' (dropped!)' : ''}`,
        }),
      );
    }
    renderLoss(this.loss, c, this.ctx);
    const live = compactionOpen(c);
    const allReady = c.blocks.length > 0 && c.blocks.every(isSettled);
    this.adopt.hidden = !live;
    this.cancel.hidden = !live;
    this.dismiss.hidden = live;
    // Not while the judge decides: the host adopts only a summary that is the user's or held (as the review editor).
    setDisabled(this.adopt, !(allReady && (c.state === 'ready' || c.state === 'held')));
  }

  private renderChip(b: BlockView): void {
    const chip = this.chips.get(b.index);
    if (!chip) return;
    // The block's own tokens → its summary's (never the worker's prompt, which holds context besides the block). A
    // sent block has no summary tokens yet to show.
    const writing = b.status === 'streaming' && !awaitingFirstTokens(b);
    // A summary nobody counted yet (an edit before the host's count) is a chars/4 guess: "≈" says so.
    const counted = summaryTokens(b);
    const io =
      counted !== null
        ? `${formatTokens(b.tokens)}→${counted.estimate ? '≈' : ''}${formatTokens(counted.n)}`
        : writing
          ? `${formatTokens(b.tokens)}→${b.streamedTokens}…`
          : `${formatTokens(b.tokens)}`;
    chip.className = `cp-chip st-${b.status}${this.ctx.ui.selectedBlock === b.index ? ' selected' : ''}`;
    chip.setAttribute('aria-selected', String(this.ctx.ui.selectedBlock === b.index));
    // The accessible name starts with the visible text, then says what the numbers count.
    chip.setAttribute(
      'aria-label',
      `#${b.index + 1} ${blockStatusWord(b)} ${io}: block ${b.index + 1}, messages ${b.firstMessage} to ${b.lastMessage}` +
        `${writing ? `, ${b.streamedTokens} tokens so far` : ''}, ${io.replace('→', ' tokens in the block, ')}` +
        `${b.summary !== null || writing ? ' in the summary' : ''}`,
    );
    chip.title = `Block ${b.index + 1}: messages ${b.firstMessage}–${b.lastMessage} · ${blockStatusWord(b)}`;
    clear(chip);
    chip.append(
      h('span', { class: 'chip-n', text: `#${b.index + 1}` }),
      ' ',
      h('span', { class: 'chip-st', text: blockStatusWord(b) }),
      ' ',
      h('span', { class: 'chip-io', text: io }),
    );
  }

  private fixTabStop(c: CompactionView): void {
    const sel = this.ctx.ui.selectedBlock;
    const target = sel !== null && this.chips.has(sel) ? sel : c.blocks[0]?.index;
    for (const [i, chip] of this.chips) chip.tabIndex = i === target ? 0 : -1;
  }

  private gridKeys(e: KeyboardEvent): void {
    const c = this.ctx.model.snap?.compaction;
    if (!c || c.blocks.length === 0) return;
    const idx = c.blocks.findIndex((b) => b.index === this.ctx.ui.selectedBlock);
    let next: number;
    if (e.key === 'ArrowRight' || e.key === 'ArrowDown') next = Math.min(c.blocks.length - 1, idx + 1);
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') next = Math.max(0, idx - 1);
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = c.blocks.length - 1;
    else return;
    e.preventDefault();
    const b = c.blocks[next]!;
    this.ctx.selectBlock(b.index);
    this.chips.get(b.index)?.focus();
  }

  renderPreview(): void {
    const c = this.ctx.model.snap?.compaction;
    const sel = this.ctx.ui.selectedBlock;
    for (const [i, chip] of this.chips) {
      chip.classList.toggle('selected', i === sel);
      chip.setAttribute('aria-selected', String(i === sel));
    }
    if (c) this.fixTabStop(c);
    clear(this.preview);
    const b = c?.blocks.find((x) => x.index === sel);
    if (!c || !b) {
      if (c && c.blocks.length) this.preview.append(h('p', { class: 'muted', text: 'Select a block to preview its summary.' }));
      return;
    }
    const m = meter(`Block ${b.index + 1}: summary tokens of block tokens`, 'm-block', 'Block → summary');
    const outTok = blockSummaryTokens(b);
    const est = summaryTokens(b)?.estimate ? '≈' : '';
    m.set(
      outTok,
      0,
      Math.max(1, b.tokens),
      `block ${formatTokens(b.tokens)} tokens, summary ${est ? 'about ' : ''}${formatTokens(outTok)} tokens`,
      `${formatTokens(b.tokens)} → ${est}${formatTokens(outTok)}`,
    );
    this.preview.append(
      h(
        'div',
        { class: 'pv-head' },
        h('strong', { text: `Block ${b.index + 1}` }),
        h('span', { class: `pv-status st-${b.status}`, text: blockStatusWord(b) }),
        h('span', { class: 'muted', text: `messages ${b.firstMessage}–${b.lastMessage}` }),
      ),
      m.el,
    );
    // The worker's prompt holds more than the block (instructions, context), so its size and cache hits are for those
    // who tune the cache.
    if (b.stats) {
      const s = b.stats;
      this.preview.append(
        h(
          'details',
          { class: 'pv-worker' },
          h('summary', { text: 'Worker details' }),
          h('span', {
            class: 'muted',
            text:
              `prompt ${formatTokens(s.inputTokens)} tok${s.cachedTokens !== null ? ` (${formatTokens(s.cachedTokens)} cached)` : ''}` +
              ` · wrote ${formatTokens(s.outputTokens)} tok in ${s.ms} ms${b.status === 'edited' ? ' (replaced by your edit)' : ''}`,
          }),
        ),
      );
    }
    if (b.error) this.preview.append(h('div', { class: 'error', role: 'alert', text: b.error }));
    // A closed compaction (cancelled, failed, adopted) takes no edit or regeneration.
    const open = compactionOpen(c);
    const editable = open && (b.status === 'done' || b.status === 'edited' || b.status === 'failed');
    if (this.editing && this.editing.block === b.index) {
      const ta = h('textarea', { class: 'pv-edit', 'aria-label': `Edit summary of block ${b.index + 1}`, rows: 10 });
      ta.value = this.editing.text;
      ta.addEventListener('input', () => {
        if (this.editing) this.editing.text = ta.value;
      });
      const save = button('Save', { cls: 'pv-save' });
      const cancel = button('Discard', { secondary: true, cls: 'pv-discard' });
      const doSave = () => {
        post({ type: 'block-edit', compactionId: c.id, block: b.index, text: ta.value });
        this.editing = null;
        this.renderPreview();
      };
      save.addEventListener('click', doSave);
      cancel.addEventListener('click', () => {
        this.editing = null;
        this.renderPreview();
      });
      ta.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
          e.preventDefault();
          doSave();
        } else if (e.key === 'Escape') {
          e.preventDefault();
          this.editing = null;
          this.renderPreview();
        }
      });
      this.preview.append(
        ta,
        h('div', { class: 'row' }, save, cancel, h('span', { class: 'muted', text: 'Ctrl+Enter saves, Esc discards' })),
      );
      requestAnimationFrame(() => ta.focus());
      return;
    }
    const body = h('div', { class: 'pv-body md' });
    if (b.summary) fillMarkdown(body, summaryMarkdown(b.summary));
    else if (b.status === 'streaming') body.append(h('p', { class: 'muted', text: runningSummaryText(b.streamedTokens) }));
    else if (b.status === 'queued') body.append(h('p', { class: 'muted', text: 'Queued.' }));
    else body.append(h('p', { class: 'muted', text: 'No summary.' }));
    const edit = button('Edit', { secondary: true, cls: 'pv-edit-btn', disabled: !editable });
    edit.addEventListener('click', () => {
      this.editing = { block: b.index, text: b.summary ?? '' };
      this.renderPreview();
    });
    const regen = button('Regenerate', {
      secondary: true,
      cls: 'pv-regen',
      disabled: !open || b.status === 'queued' || b.status === 'streaming',
    });
    regen.addEventListener('click', () => post({ type: 'block-regenerate', compactionId: c.id, block: b.index }));
    // The block's indices name messages of the context it was planned on; after a pin or adoption they name others.
    const show = button('Show messages', { secondary: true, cls: 'pv-show', disabled: !indicesHold(c, this.ctx.model.snap!.split) });
    show.addEventListener('click', () => this.ctx.selectMessage(b.firstMessage, { reveal: true }));
    this.preview.append(body, h('div', { class: 'row' }, edit, regen, show));
  }
}

export function verdictView(v: VerdictView): HTMLElement {
  const cls = v.accepted ? 'ok' : 'bad';
  return h(
    'div',
    {
      class: `verdict ${cls}`,
      role: 'group',
      'aria-label': `Judge verdict: ${v.accepted ? 'accepted' : 'rejected'}, score ${v.overall} of 10`,
    },
    h('span', { class: 'verdict-score', text: `${v.overall}/10` }),
    h('span', { class: 'verdict-word', text: v.accepted ? 'accepted' : 'rejected' }),
    h('span', {
      class: 'muted',
      text: `alignment ${v.alignment} · non-contradiction ${v.nonContradiction}${v.attempt > 1 ? ` · attempt ${v.attempt}` : ''}`,
    }),
    v.diagnosis ? h('div', { class: 'verdict-diag', text: v.diagnosis }) : null,
  );
}

/**
 * The merged summary's size, and why it passes its blocks' sum: the merge adds a header (what was compacted, how to
 * recall it) and one heading per part, which the chips, counting each block's own summary, do not show; and the total
 * is the local count calibrated to the server's, a block's the server's own, so a little is counting.
 */
function summaryPart(total: number, blocks: readonly BlockView[], headings: number | undefined): string {
  const written = blocks.reduce((a, b) => a + blockSummaryTokens(b), 0);
  if (written <= 0 || total <= written) return `summary ${formatTokens(total)} tok`;
  if (headings === undefined)
    return `summary ${formatTokens(total)} tok (blocks ${formatTokens(written)} + ≈${formatTokens(total - written)} of merge headings)`;
  const rest = total - written - headings;
  const counting = rest === 0 ? '' : ` ${rest > 0 ? '+' : '−'} ≈${formatTokens(Math.abs(rest))} by the local count`;
  return `summary ${formatTokens(total)} tok (blocks ${formatTokens(written)} + ${formatTokens(headings)} of merge headings${counting})`;
}
