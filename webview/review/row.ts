import type { BlockView, ViewMessage } from '../../src/protocol/messages';
import type { LossFactView } from '../../src/protocol/review';
import { button, clear, h, setAttr, setDisabled, setText } from '../dom';
import { formatTokens, summaryTokens } from '../../src/protocol/messages';
import { blockStatusWord, runningSummaryText } from '../../src/protocol/runningText';
import { formatMs, isDropped, keysRegex, messageText } from './format';

export interface RowActions {
  select(block: number, focusRow: boolean): void;
  edit(block: number): void;
  save(block: number, text: string): void;
  cancelEdit(block: number): void;
  regenerate(block: number, focus: string | null): void;
  toggleDrop(block: number): void;
  draft(block: number, text: string | null): void;
}

/**
 * One block: its own messages on the left (dropped facts marked), the summary
 * on the right, editable in place. Rebuilt in parts: the originals only when
 * the block's lost facts change, the summary on every delta.
 */
export class BlockRow {
  readonly el: HTMLElement;
  private readonly title: HTMLElement;
  private readonly status: HTMLElement;
  private readonly nums: HTMLElement;
  private readonly worker: HTMLElement;
  private readonly orig: HTMLElement;
  private readonly sum: HTMLElement;
  private readonly head: HTMLElement;
  private regenBox: HTMLElement | null = null;
  private regenInput: HTMLInputElement | null = null;
  private dropBtn: HTMLElement | null = null;
  /** Edit, Regenerate… and Drop: only while the compaction may still be adopted (setOpen). */
  private controls: HTMLElement[] = [];
  private open = true;
  private lossKey = '';
  /** Whether the compaction was adopted: its rows' originals are then archived, not just moved. */
  private adopted = false;
  /**
   * Originals and the row's buttons are built when the row first comes near
   * the viewport: 30 blocks of a 120K-token head are ~500 KB of text, and
   * each vscode-button costs a custom element's render.
   */
  shown = false;
  private editing: HTMLTextAreaElement | null = null;
  block: BlockView;

  constructor(
    block: BlockView,
    private readonly actions: RowActions,
  ) {
    this.block = block;
    const i = block.index;
    this.title = h('h2', { class: 'rv-title', id: `rv-title-${i}` });
    this.status = h('span', { class: 'rv-status' });
    this.nums = h('span', { class: 'rv-nums' });
    this.worker = h('span', { class: 'rv-worker-text' });
    const details = h('details', { class: 'rv-worker' }, h('summary', { text: 'Worker details' }), this.worker);
    this.orig = h('div', { class: 'rv-orig', role: 'region', 'aria-label': `Block ${i + 1} original messages`, tabindex: 0 });
    this.sum = h('div', { class: 'rv-sum', role: 'region', 'aria-label': `Block ${i + 1} summary`, tabindex: 0 });
    this.head = h('div', { class: 'rv-row-head' }, this.title, this.status, this.nums, h('span', { class: 'spacer' }));
    this.el = h(
      'section',
      { class: 'rv-row', 'data-block': i, tabindex: -1, 'aria-labelledby': `rv-title-${i}` },
      this.head,
      h('div', { class: 'rv-cols' }, this.orig, this.sum),
      details,
    );
    this.el.addEventListener('focusin', () => actions.select(i, false));
    this.orig.append(h('p', { class: 'muted', text: 'Loading the original messages…' }));
    this.update(block);
  }

  /** A closed compaction (cancelled, failed, adopted) takes no edit, regeneration or drop: its controls say so. */
  setOpen(open: boolean): void {
    this.open = open;
    for (const b of this.controls) setDisabled(b, !open);
  }

  /** First time near the viewport: the buttons and the originals. */
  show(messages: readonly ViewMessage[], lost: readonly LossFactView[]): void {
    if (this.shown) return;
    this.shown = true;
    const i = this.block.index;
    const edit = button('Edit', { secondary: true, cls: 'rv-edit', title: 'Edit this summary in place (E)' });
    const regen = button('Regenerate…', { secondary: true, cls: 'rv-regen', title: 'Run this block again, optionally with a focus (R)' });
    this.dropBtn = button('Drop', { secondary: true, cls: 'rv-drop' });
    edit.addEventListener('click', () => this.actions.edit(i));
    regen.addEventListener('click', () => this.openRegenerate());
    this.dropBtn.addEventListener('click', () => this.actions.toggleDrop(i));
    this.head.append(edit, regen, this.dropBtn);
    this.controls = [edit, regen, this.dropBtn];
    this.setOpen(this.open);
    this.update(this.block);
    this.renderOriginals(messages, lost);
  }

  private regenerateBox(): { box: HTMLElement; input: HTMLInputElement } {
    if (!this.regenBox || !this.regenInput) {
      const i = this.block.index;
      const input = h('input', {
        class: 'rv-focus',
        type: 'text',
        placeholder: 'Focus for this block (optional)',
        'aria-label': `Focus for regenerating block ${i + 1}`,
      });
      const go = button('Regenerate', { cls: 'rv-regen-go' });
      const cancel = button('Cancel', { secondary: true, cls: 'rv-regen-cancel' });
      go.addEventListener('click', () => this.runRegenerate());
      cancel.addEventListener('click', () => this.closeRegenerate());
      input.addEventListener('keydown', (e) => {
        e.stopPropagation();
        if (e.key === 'Enter') this.runRegenerate();
        else if (e.key === 'Escape') this.closeRegenerate();
      });
      this.regenInput = input;
      this.regenBox = h('div', { class: 'rv-regen-box' }, input, go, cancel);
      this.head.after(this.regenBox);
    }
    return { box: this.regenBox, input: this.regenInput };
  }

  openRegenerate(focus = ''): void {
    const { box, input } = this.regenerateBox();
    box.hidden = false;
    input.value = focus;
    input.focus();
  }

  private runRegenerate(): void {
    const f = this.regenInput?.value.trim() ?? '';
    this.closeRegenerate();
    this.actions.regenerate(this.block.index, f || null);
  }

  private closeRegenerate(): void {
    if (this.regenBox) this.regenBox.hidden = true;
    this.el.focus();
  }

  /** The originals with the block's dropped facts marked; skipped when the set of facts is unchanged. */
  renderOriginals(messages: readonly ViewMessage[], lost: readonly LossFactView[], adopted = this.adopted): void {
    this.adopted = adopted;
    if (!this.shown) return;
    // The messages too: none are shown once the compaction's indices no longer point at them.
    const key = `${messages.length}\n${adopted}\n${lost.map((f) => f.id).join('\n')}`;
    if (key === this.lossKey && (messages.length === 0 || this.orig.querySelector('.rv-msg'))) return;
    this.lossKey = key;
    clear(this.orig);
    if (messages.length === 0) {
      // Not an empty block: the context changed under the compaction (adopted: its originals are archived).
      this.orig.append(
        h('p', {
          class: 'rv-archived muted',
          text: adopted
            ? 'These messages are no longer in the context: adopted, their originals are archived ' +
              '(Undo compaction brings them back, and the agent can recall them).'
            : 'These messages are no longer where this compaction found them: the context changed after it was planned.',
        }),
      );
      return;
    }
    const byMsg = new Map<string, LossFactView[]>();
    for (const f of lost) byMsg.set(f.messageId, [...(byMsg.get(f.messageId) ?? []), f]);
    const b = this.block;
    for (let k = b.firstMessage; k <= b.lastMessage && k < messages.length; k++) {
      const m = messages[k]!;
      const body = h('div', { class: 'rv-msg-body' });
      const facts = byMsg.get(m.id);
      markFacts(body, messageText(m), facts ?? []);
      // Preserving user messages, a block's span can hold user messages that stay in context as they are.
      const kept = b.kept?.includes(k) ?? false;
      this.orig.append(
        h(
          'article',
          { class: `rv-msg role-${m.role}${kept ? ' rv-kept' : ''}`, id: `rv-msg-${m.id}`, 'data-message': m.id },
          h(
            'div',
            { class: 'rv-msg-head' },
            h('span', { class: 'rv-role', text: m.kind === 'summary' ? 'earlier summary' : m.role }),
            kept ? h('span', { class: 'tag', text: 'kept verbatim' }) : null,
            h('span', { class: 'muted', text: `#${m.index} · ${formatTokens(m.tokens)} tok` }),
          ),
          body,
        ),
      );
    }
  }

  /** Marks the block as looked at and accepted (Enter); the mark goes when its summary changes. */
  setAccepted(on: boolean): void {
    this.el.classList.toggle('accepted', on);
    let badge = this.head.querySelector<HTMLElement>('.rv-accepted');
    if (on && !badge) {
      badge = h('span', { class: 'rv-accepted', text: '✓ accepted' });
      this.status.after(badge);
    } else if (!on) badge?.remove();
  }

  update(b: BlockView): void {
    this.block = b;
    const dropped = isDropped(b);
    setText(this.title, `Block ${b.index + 1} · messages ${b.firstMessage}–${b.lastMessage}`);
    setText(this.status, dropped ? 'dropped' : blockStatusWord(b));
    setAttr(this.status, 'class', `rv-status st-${dropped ? 'dropped' : b.status}`);
    const st = summaryTokens(b);
    setText(
      this.nums,
      `${formatTokens(b.tokens)} tok in the block` +
        (st
          ? ` → ${st.estimate ? '≈' : ''}${formatTokens(st.n)} in the summary (${(b.tokens / Math.max(1, st.n)).toFixed(1)}×)`
          : b.status === 'streaming'
            ? ` → ${b.streamedTokens} so far`
            : ''),
    );
    if (this.dropBtn) {
      setText(this.dropBtn, dropped ? 'Keep' : 'Drop');
      setAttr(
        this.dropBtn,
        'title',
        dropped ? 'Restore the summary of this block (D)' : 'Drop this block from the summary; its originals stay archived (D)',
      );
    }
    const s = b.stats;
    setText(
      this.worker,
      s
        ? `The worker's prompt: ${formatTokens(s.inputTokens)} tok (the block, its instructions and the context its layout gives)` +
            `${s.cachedTokens !== null ? `, ${formatTokens(s.cachedTokens)} from the prefix cache` : ''}; ` +
            `${formatTokens(s.outputTokens)} tok written in ${formatMs(s.ms)}.`
        : 'No worker result yet.',
    );
    if (!this.editing) this.renderSummary();
  }

  private renderSummary(): void {
    const b = this.block;
    clear(this.sum);
    if (b.status === 'failed')
      this.sum.append(
        h('p', { class: 'error', text: `Failed: ${b.error ?? 'unknown error'}. Regenerate it or write the summary by hand (E).` }),
      );
    if (b.summary !== null) this.sum.append(h('div', { class: 'rv-sum-text', text: b.summary }));
    else if (b.status !== 'failed')
      this.sum.append(
        h('p', { class: 'muted', text: b.status === 'streaming' ? runningSummaryText(b.streamedTokens) : 'Waiting for a worker.' }),
      );
  }

  get isEditing(): boolean {
    return this.editing !== null;
  }

  startEdit(initial: string | undefined, focus = true): void {
    if (this.editing) return void (focus && this.editing.focus());
    const ta = h('textarea', {
      class: 'rv-editor',
      'aria-label': `Edit the summary of block ${this.block.index + 1}. Ctrl+Enter saves, Escape cancels.`,
    });
    ta.value = initial ?? this.block.summary ?? '';
    const save = button('Save', { cls: 'rv-save', title: 'Ctrl+Enter' });
    const cancel = button('Cancel', { secondary: true, cls: 'rv-cancel-edit', title: 'Escape' });
    clear(this.sum);
    this.sum.append(
      ta,
      h('div', { class: 'rv-edit-bar' }, save, cancel, h('span', { class: 'muted', text: 'Ctrl+Enter saves · Escape cancels' })),
    );
    this.editing = ta;
    ta.addEventListener('input', () => this.actions.draft(this.block.index, ta.value));
    ta.addEventListener('keydown', (e) => {
      e.stopPropagation();
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        this.finishEdit(true);
      } else if (e.key === 'Escape') {
        e.preventDefault();
        this.finishEdit(false);
      }
    });
    save.addEventListener('click', () => this.finishEdit(true));
    cancel.addEventListener('click', () => this.finishEdit(false));
    ta.style.height = `${Math.min(600, Math.max(160, ta.scrollHeight + 8))}px`;
    if (focus) ta.focus();
  }

  private finishEdit(keep: boolean): void {
    const ta = this.editing;
    if (!ta) return;
    this.editing = null;
    const text = ta.value;
    if (keep && text.trim() && text !== this.block.summary) this.actions.save(this.block.index, text);
    else this.actions.cancelEdit(this.block.index);
    this.renderSummary();
    this.el.focus();
  }

  /** Scrolls the original message into view inside its column and flashes the fact. */
  reveal(messageId: string, key: string | null): void {
    const msg = this.orig.querySelector<HTMLElement>(`[data-message="${CSS.escape(messageId)}"]`);
    if (!msg) return;
    const mark = key ? (Array.from(msg.querySelectorAll<HTMLElement>('mark.rv-lost')).find((m) => m.textContent === key) ?? null) : null;
    const target = mark ?? msg;
    this.el.scrollIntoView({ block: 'start' });
    this.orig.scrollTop = Math.max(0, target.offsetTop - this.orig.offsetTop - 24);
    target.classList.remove('rv-flash');
    void target.offsetWidth;
    target.classList.add('rv-flash');
    target.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: true });
  }
}

function markFacts(into: HTMLElement, text: string, facts: readonly LossFactView[]): void {
  const re = keysRegex(facts.map((f) => f.key));
  if (!re) {
    into.textContent = text;
    return;
  }
  const byKey = new Map(facts.map((f) => [f.key, f]));
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) into.append(text.slice(last, m.index));
    const f = byKey.get(m[0])!;
    into.append(h('mark', { class: `rv-lost kind-${f.kind}`, 'data-fact': f.id, title: `Not in the summary (${f.kind})`, text: m[0] }));
    // Two facts may share a key (an exception name is an error and an identifier): the mark answers for both.
    last = m.index + m[0].length;
  }
  if (last < text.length) into.append(text.slice(last));
}
