/**
 * The chat: a window of messages (the last PAGE by default; more load as you
 * scroll up), the streaming reply, and pending tool approvals. Rendering
 * 5,000 markdown messages up front would blow the first-render budget, so
 * only the window is in the DOM.
 */
import type { ApprovalView, ViewMessage } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { button, clear, h, setText } from '../dom';
import { fillMarkdown } from '../markdown';
import { formatTokens } from '../projection';
import { post } from '../vscodeApi';
import { verdictView } from './compaction';

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
  private restoring = false;

  constructor(private ctx: Ctx) {
    this.streamEl.append(h('header', { class: 'msg-head' }, h('span', { class: 'role', text: 'assistant' }), h('span', { class: 'muted', text: 'typing…' })), this.streamBody);
    this.earlier.addEventListener('click', () => this.loadEarlier());
    this.later.addEventListener('click', () => this.loadLater());
    this.el = h('section', { class: 'chat', 'aria-label': 'Chat' }, this.earlier, this.list, this.later, this.streamEl, this.approvals, this.pinSel);
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
      const article = (sel!.anchorNode instanceof Element ? sel!.anchorNode : sel!.anchorNode?.parentElement)?.closest<HTMLElement>('article[data-id]');
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
    return `${m.index}|${m.content.length}|${m.tokens}|${m.origin}|${m.kind}|${m.verdict?.overall ?? ''}|${this.ctx.ui.selectedId === m.id ? 's' : ''}${expanded}`;
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
          clear(this.streamBody);
          this.streamBody.append(h('span', { class: 'thinking', text: 'Working…' }));
        }
        if (this.ctx.ui.follow) this.el.scrollTop = this.el.scrollHeight;
      }
    });
  }

  renderApprovals(): void {
    const list = this.ctx.model.snap?.agent.approvals ?? [];
    clear(this.approvals);
    for (const a of list) this.approvals.append(approvalCard(a));
    if (list.length && this.ctx.ui.follow) this.scrollToBottom();
  }

  // ── one message ─────────────────────────────────────────────────────────
  private message(m: ViewMessage): HTMLElement {
    const selected = this.ctx.ui.selectedId === m.id;
    const el = h('article', {
      class: `msg role-${m.role} kind-${m.kind} origin-${m.origin}${selected ? ' selected' : ''}`,
      'data-id': m.id,
      'data-index': m.index,
      tabindex: -1,
      'aria-label': `${m.kind === 'summary' ? 'Summary' : m.role} message ${m.index}, ${m.tokens} tokens`,
    });
    el.dataset.key = this.key(m);
    const head = h(
      'header',
      { class: 'msg-head' },
      h('span', { class: 'role', text: m.kind === 'summary' ? 'summary' : m.kind === 'pinned' ? 'pinned' : m.role }),
      m.origin === 'kept' ? h('span', { class: 'tag', text: 'kept' }) : null,
      h('span', { class: 'muted tokens', text: `#${m.index} · ${formatTokens(m.tokens)} tok` }),
      h('span', { class: 'spacer' }),
    );
    const pin = h('button', { class: 'link-btn act-pin', type: 'button', 'data-act': 'pin', title: 'Pin this message (or the selected passage in it)', 'aria-label': `Pin message ${m.index}`, text: 'Pin' });
    head.append(pin);
    el.append(head);
    if (m.kind === 'summary' && m.verdict) el.append(verdictView(m.verdict));
    if (m.reasoning) {
      const d = h('details', { class: 'reasoning' }, h('summary', { text: 'Reasoning' }));
      const body = h('div', { class: 'md muted' });
      fillMarkdown(body, m.reasoning);
      d.append(body);
      el.append(d);
    }
    if (m.role === 'tool') {
      const long = m.content.length > 600 || m.content.split('\n').length > 12;
      // Scrollable, so reachable by keyboard.
      const pre = h('pre', { class: 'tool-out', tabindex: 0, 'aria-label': `Output of message ${m.index}` }, h('code', { text: m.content }));
      if (long) {
        const d = h('details', { class: 'tool-result' }, h('summary', { text: `Tool output · ${m.content.split('\n').length} lines${m.truncated ? ' (cut)' : ''}` }), pre);
        el.append(d);
      } else {
        el.append(pre);
        if (m.truncated) el.append(h('div', { class: 'muted', text: '(output cut)' }));
      }
    } else if (m.content) {
      const body = h('div', { class: 'md' });
      fillMarkdown(body, m.content);
      el.append(body);
    }
    if (m.toolCalls && m.toolCalls.length) {
      for (const c of m.toolCalls) {
        let args = c.arguments;
        try {
          args = JSON.stringify(JSON.parse(c.arguments), null, 2);
        } catch {
          /* keep raw */
        }
        el.append(h('details', { class: 'tool-call' }, h('summary', null, h('span', { class: 'tool-name', text: c.name }), h('span', { class: 'muted', text: ` ${oneLine(c.arguments)}` })), h('pre', null, h('code', { text: args }))));
      }
    }
    if (m.kind === 'summary' && (m.archivedCount ?? 0) > 0) {
      const expanded = this.ctx.ui.expanded.includes(m.id);
      const btn = h('button', { class: 'link-btn act-expand', type: 'button', 'data-act': 'expand', 'aria-expanded': String(expanded), text: expanded ? `Hide ${m.archivedCount} archived originals` : `Show ${m.archivedCount} archived originals` });
      el.append(btn);
      if (expanded) {
        const arch = this.ctx.model.archived.get(m.id);
        const box = h('div', { class: 'archived', role: 'list', 'aria-label': 'Archived originals' });
        if (!arch) box.append(h('div', { class: 'muted', text: 'Loading…' }));
        else
          for (const a of arch) {
            const item = h('div', { class: `arch role-${a.role}`, role: 'listitem' }, h('span', { class: 'role', text: a.role }), h('span', { class: 'muted', text: ` · ${formatTokens(a.tokens)} tok` }));
            const body = h('div', { class: 'md' });
            if (a.role === 'tool') body.append(h('pre', null, h('code', { text: a.content })));
            else fillMarkdown(body, a.content || (a.toolCalls ?? []).map((c) => `\`${c.name}(${c.arguments})\``).join('\n'));
            item.append(body);
            box.append(item);
          }
        el.append(box);
      }
    }
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

function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ');
  return t.length > 80 ? `${t.slice(0, 77)}…` : t;
}

function preview(m: ViewMessage): string {
  return (m.toolCalls ?? []).map((c) => `${c.name}(${c.arguments})`).join('\n');
}

function approvalCard(a: ApprovalView): HTMLElement {
  const card = h('div', { class: 'approval', role: 'group', 'aria-label': `Approve ${a.tool}?`, 'data-call': a.callId });
  card.append(h('div', { class: 'ap-head' }, h('strong', { text: a.tool }), h('span', { text: ` ${a.summary}` })));
  if (a.command) card.append(h('pre', { class: 'ap-command' }, h('code', { text: a.command })));
  if (a.path) card.append(h('div', { class: 'ap-path', text: a.path }));
  if (a.diff) card.append(diffView(a.diff));
  const reason = h('input', { class: 'ap-reason', type: 'text', placeholder: 'Reason (optional, sent to the agent)', 'aria-label': 'Reason for rejecting' });
  const ok = button('Approve', { cls: 'ap-approve' });
  const no = button('Reject', { secondary: true, cls: 'ap-reject' });
  ok.addEventListener('click', () => {
    card.classList.add('pending');
    post({ type: 'approve', callId: a.callId });
  });
  no.addEventListener('click', () => {
    card.classList.add('pending');
    const r = reason.value.trim();
    post({ type: 'reject', callId: a.callId, reason: r ? r : null });
  });
  reason.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      no.click();
    }
  });
  card.append(h('div', { class: 'row' }, ok, no, reason));
  return card;
}

function diffView(diff: string): HTMLElement {
  const pre = h('pre', { class: 'diff', 'aria-label': 'Proposed change (unified diff)' });
  const lines = diff.split('\n');
  const max = 800;
  for (const line of lines.slice(0, max)) {
    const cls = line.startsWith('+++') || line.startsWith('---') ? 'd-file' : line.startsWith('@@') ? 'd-hunk' : line.startsWith('+') ? 'd-add' : line.startsWith('-') ? 'd-del' : 'd-ctx';
    pre.append(h('span', { class: cls, text: line }), '\n');
  }
  if (lines.length > max) pre.append(h('span', { class: 'muted', text: `… ${lines.length - max} more lines` }));
  return pre;
}
