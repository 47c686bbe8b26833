/**
 * The chat: a window of messages (the last PAGE by default; more load as you
 * scroll up), the streaming reply, and pending tool approvals. Rendering
 * 5,000 markdown messages up front would blow the first-render budget, so
 * only the window is in the DOM.
 */
import type { ViewMessage } from '../../src/protocol/messages';
import { agentWaitText } from '../../src/protocol/runningText';
import type { Ctx } from '../ctx';
import { clear, h, setText } from '../dom';
import { fillMarkdown } from '../markdown';
import { approvalCard, preview, renderMessage } from './chatMessage';

const PAGE = 40;
const MAX_WINDOW = 400;

export class Chat {
  readonly el: HTMLElement;
  private list = h('div', { class: 'chat-list', role: 'log', 'aria-label': 'Conversation', 'aria-live': 'off' });
  private earlier = h('button', { class: 'load-more', type: 'button' });
  private later = h('button', { class: 'load-more', type: 'button' });
  private streamEl = h('article', { class: 'msg role-assistant streaming', hidden: true, 'aria-live': 'polite', 'aria-busy': 'true' });
  private streamBody = h('div', { class: 'md' });
  private approvals = h('div', { class: 'approvals', role: 'region', 'aria-label': 'Tool approvals' });
  private pinSel = h('button', { class: 'pin-selection', type: 'button', hidden: true, text: 'Pin selection' });
  private start = 0;
  private end = 0;
  private els = new Map<string, HTMLElement>();
  private streamQueued = 0;
  private waitTicker: ReturnType<typeof setTimeout> | undefined;
  private readonly waitLabel = h('span');
  private readonly waitSeconds = h('span', { 'aria-hidden': 'true' });
  private readonly waitLine = h('span', { class: 'thinking' }, this.waitLabel, this.waitSeconds);
  private restoring = false;

  constructor(private ctx: Ctx) {
    this.streamEl.append(
      h('header', { class: 'msg-head' }, h('span', { class: 'role', text: 'assistant' }), h('span', { class: 'muted', text: 'typing…' })),
      this.streamBody,
    );
    this.earlier.addEventListener('click', () => this.loadEarlier());
    this.later.addEventListener('click', () => this.loadLater());
    this.el = h(
      'section',
      { class: 'chat', 'aria-label': 'Chat' },
      this.earlier,
      this.list,
      this.later,
      this.streamEl,
      this.approvals,
      this.pinSel,
    );
    this.el.addEventListener('scroll', () => {
      if (this.restoring) return;
      const atBottom = this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight < 24;
      this.ctx.ui.follow = atBottom && this.end >= this.count();
      this.ctx.ui.chatScrollTop = this.el.scrollTop;
      this.ctx.save();
      if (this.el.scrollTop < 40 && this.start > 0 && !this.earlier.hidden) this.loadEarlier();
      this.hidePinSel();
    });
    this.el.addEventListener('click', (e) => this.onClick(e));
    document.addEventListener('selectionchange', () => this.onSelection());
    this.pinSel.addEventListener('mousedown', (e) => e.preventDefault());
    this.pinSel.addEventListener('click', () => {
      const sel = document.getSelection();
      const text = sel?.toString().trim();
      if (!text) return;
      const article = (sel!.anchorNode instanceof Element ? sel!.anchorNode : sel!.anchorNode?.parentElement)?.closest<HTMLElement>(
        'article[data-id]',
      );
      this.ctx.pinText(text, article?.dataset.id ?? null);
      sel!.removeAllRanges();
      this.hidePinSel();
    });
  }

  private count(): number {
    return this.ctx.model.snap?.messages.length ?? 0;
  }

  /** Full render from the snapshot (window restored from UI state). */
  render(): void {
    const n = this.count();
    const ui = this.ctx.ui;
    if (ui.follow || ui.chatStart === null || ui.chatStart >= n) {
      this.start = Math.max(0, n - PAGE);
      this.end = n;
    } else {
      this.start = Math.max(0, Math.min(ui.chatStart, n - 1));
      this.end = Math.min(n, this.start + PAGE * 2);
    }
    this.rebuild();
    this.renderStreaming();
    this.renderApprovals();
    this.restoring = true;
    requestAnimationFrame(() => {
      if (ui.follow) this.el.scrollTop = this.el.scrollHeight;
      else this.el.scrollTop = ui.chatScrollTop;
      this.restoring = false;
    });
  }

  private rebuild(): void {
    const msgs = this.ctx.model.snap?.messages ?? [];
    const keep = new Map<string, HTMLElement>();
    const frag = document.createDocumentFragment();
    for (let i = this.start; i < this.end; i++) {
      const m = msgs[i]!;
      const key = this.key(m);
      let el = this.els.get(m.id);
      if (!el || el.dataset.key !== key) el = this.message(m);
      keep.set(m.id, el);
      frag.append(el);
    }
    this.els = keep;
    clear(this.list);
    this.list.append(frag);
    this.updateMore();
  }

  private key(m: ViewMessage): string {
    const expanded = this.ctx.ui.expanded.includes(m.id) ? `x${this.ctx.model.archived.get(m.id)?.length ?? -1}` : '';
    const selected = this.ctx.ui.selectedId === m.id ? 's' : '';
    return `${m.index}|${m.content.length}|${m.tokens}|${m.origin}|${m.kind}|${m.verdict?.overall ?? ''}|${selected}${expanded}`;
  }

  private updateMore(): void {
    const n = this.count();
    this.earlier.hidden = this.start <= 0;
    setText(this.earlier, `Show earlier messages (${this.start} more)`);
    this.later.hidden = this.end >= n;
    setText(this.later, `Show later messages (${n - this.end} more)`);
    this.ctx.ui.chatStart = this.start;
  }

  private loadEarlier(): void {
    if (this.start <= 0) return;
    const before = this.el.scrollHeight - this.el.scrollTop;
    this.start = Math.max(0, this.start - PAGE);
    if (this.end - this.start > MAX_WINDOW) this.end = this.start + MAX_WINDOW;
    this.rebuild();
    this.el.scrollTop = this.el.scrollHeight - before;
    this.ctx.save();
  }

  private loadLater(): void {
    const n = this.count();
    this.end = Math.min(n, this.end + PAGE * 2);
    if (this.end - this.start > MAX_WINDOW) this.start = this.end - MAX_WINDOW;
    this.rebuild();
  }

  /** A message was appended. */
  append(): void {
    const msgs = this.ctx.model.snap?.messages ?? [];
    const n = msgs.length;
    if (this.end === n - 1) {
      const m = msgs[n - 1]!;
      const el = this.message(m);
      this.els.set(m.id, el);
      this.list.append(el);
      this.end = n;
      if (this.end - this.start > MAX_WINDOW && this.ctx.ui.follow) {
        const drop = msgs[this.start]!;
        this.els.get(drop.id)?.remove();
        this.els.delete(drop.id);
        this.start++;
      }
      this.updateMore();
    } else this.updateMore();
    this.renderStreaming();
    if (this.ctx.ui.follow) this.scrollToBottom();
  }

  private scrollToBottom(): void {
    requestAnimationFrame(() => {
      this.el.scrollTop = this.el.scrollHeight;
    });
  }

  /** Brings message i into the window, scrolls to it, marks it selected. */
  reveal(index: number, focus = false): void {
    const msgs = this.ctx.model.snap?.messages ?? [];
    if (index < 0 || index >= msgs.length) return;
    if (index < this.start || index >= this.end) {
      this.start = Math.max(0, index - PAGE / 2);
      this.end = Math.min(msgs.length, index + PAGE / 2);
      this.ctx.ui.follow = false;
    }
    this.rebuild();
    const el = this.els.get(msgs[index]!.id);
    if (el) {
      el.scrollIntoView({ block: 'center', behavior: 'instant' as ScrollBehavior });
      if (focus) el.focus();
    }
  }

  refreshSelection(prevId: string | null): void {
    const msgs = this.ctx.model.snap?.messages ?? [];
    for (const id of [prevId, this.ctx.ui.selectedId]) {
      if (!id) continue;
      const el = this.els.get(id);
      const m = msgs.find((x) => x.id === id);
      if (el && m) el.classList.toggle('selected', id === this.ctx.ui.selectedId);
    }
  }

  refreshMessage(id: string): void {
    const msgs = this.ctx.model.snap?.messages ?? [];
    const m = msgs.find((x) => x.id === id);
    const old = this.els.get(id);
    if (!m || !old) return;
    const el = this.message(m);
    old.replaceWith(el);
    this.els.set(id, el);
  }

  renderStreaming(): void {
    if (this.streamQueued) return;
    this.streamQueued = requestAnimationFrame(() => {
      this.streamQueued = 0;
      const s = this.ctx.model.snap;
      const text = s?.agent.streaming ?? '';
      const show = !!s && (text.length > 0 || s.agent.running);
      this.streamEl.hidden = !show;
      if (show) {
        if (text) fillMarkdown(this.streamBody, text, false);
        else {
          // Rebuilt only when what it waits on changes: the region is live, and the seconds, which change every
          // second, are hidden from screen readers.
          // A tool call waiting for approval is what the agent waits on, not "Working…" (the card is below).
          const label = s.agent.approvals.length > 0 ? 'Waiting for your approval below' : agentWaitText(s.agent.waiting);
          if (this.waitLabel.textContent !== label || this.waitLine.parentNode !== this.streamBody) {
            clear(this.streamBody);
            setText(this.waitLabel, label);
            this.streamBody.append(this.waitLine);
          }
          // Both clocks are monotonic (the host's elapsedMs, this view's performance.now); a bad value shows as 0 s.
          const seconds = Math.max(0, Math.floor((performance.now() - this.ctx.model.waitingSince) / 1000));
          setText(this.waitSeconds, s.agent.waiting ? ` · ${seconds} s` : '');
        }
        if (this.ctx.ui.follow) this.el.scrollTop = this.el.scrollHeight;
      }
      this.tickWhile(show && !text && !!s?.agent.waiting);
    });
  }

  /** While the line shows a wait, repaints it as each whole second passes, so its seconds count. */
  private tickWhile(waiting: boolean): void {
    if (this.waitTicker) clearTimeout(this.waitTicker);
    this.waitTicker = undefined;
    if (!waiting) return;
    const toNext = 1000 - ((performance.now() - this.ctx.model.waitingSince) % 1000);
    this.waitTicker = setTimeout(() => {
      this.waitTicker = undefined;
      this.renderStreaming();
    }, toNext + 5);
  }

  renderApprovals(): void {
    const list = this.ctx.model.snap?.agent.approvals ?? [];
    clear(this.approvals);
    for (const a of list) this.approvals.append(approvalCard(a));
    if (list.length && this.ctx.ui.follow) this.scrollToBottom();
    this.renderStreaming();
  }

  // ── one message ─────────────────────────────────────────────────────────
  private message(m: ViewMessage): HTMLElement {
    const el = renderMessage(m, this.ctx);
    el.dataset.key = this.key(m);
    return el;
  }

  private onClick(e: MouseEvent): void {
    const t = e.target as HTMLElement;
    if (t.classList.contains('copy-code')) {
      const code = t.parentElement?.nextElementSibling?.textContent ?? '';
      void navigator.clipboard?.writeText(code).then(
        () => setText(t, 'Copied'),
        () => setText(t, 'Copy failed'),
      );
      return;
    }
    const act = t.closest<HTMLElement>('[data-act]')?.dataset.act;
    const article = t.closest<HTMLElement>('article[data-id]');
    if (!article) return;
    const id = article.dataset.id!;
    const m = this.ctx.model.snap?.messages.find((x) => x.id === id);
    if (!m) return;
    if (act === 'pin') {
      const sel = document.getSelection();
      const selected = sel && !sel.isCollapsed && article.contains(sel.anchorNode) ? sel.toString().trim() : '';
      this.ctx.pinText(selected || m.content || preview(m), m.id);
      return;
    }
    if (act === 'expand') {
      this.ctx.expandSummary(m.id);
      return;
    }
    if (!(document.getSelection()?.toString() ?? '')) this.ctx.selectMessage(m.index);
  }

  private onSelection(): void {
    const sel = document.getSelection();
    if (!sel || sel.isCollapsed || !this.list.contains(sel.anchorNode)) return this.hidePinSel();
    const r = sel.getRangeAt(0).getBoundingClientRect();
    const host = this.el.getBoundingClientRect();
    this.pinSel.hidden = false;
    this.pinSel.style.setProperty('--x', `${Math.max(4, r.left - host.left)}px`);
    this.pinSel.style.setProperty('--y', `${r.top - host.top + this.el.scrollTop - 28}px`);
  }

  private hidePinSel(): void {
    if (!this.pinSel.hidden) this.pinSel.hidden = true;
  }
}
