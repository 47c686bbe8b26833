/** One chat message as an article (markdown, tool output, calls, archived originals), and the approval cards. */
import { commandParts } from '../../src/protocol/commandText';
import { formatTokens, type ApprovalView, type ViewMessage } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { button, h } from '../dom';
import { fillMarkdown, summaryMarkdown } from '../markdown';

import { post } from '../vscodeApi';
import { verdictView } from './compaction';

export function renderMessage(m: ViewMessage, ctx: Ctx): HTMLElement {
  const selected = ctx.ui.selectedId === m.id;
  const el = h('article', {
    class: `msg role-${m.role} kind-${m.kind} origin-${m.origin}${selected ? ' selected' : ''}`,
    'data-id': m.id,
    'data-index': m.index,
    tabindex: -1,
    'aria-label': `${m.kind === 'summary' ? 'Summary' : m.role} message ${m.index}, ${m.tokens} tokens`,
  });
  const head = h(
    'header',
    { class: 'msg-head' },
    h('span', { class: 'role', text: m.kind === 'summary' ? 'summary' : m.kind === 'pinned' ? 'pinned' : m.role }),
    m.origin === 'kept' ? h('span', { class: 'tag', text: 'kept' }) : null,
    h('span', { class: 'muted tokens', text: `#${m.index} · ${formatTokens(m.tokens)} tok` }),
    h('span', { class: 'spacer' }),
  );
  const pin = h('button', {
    class: 'link-btn act-pin',
    type: 'button',
    'data-act': 'pin',
    title: 'Pin this message (or the selected passage in it)',
    'aria-label': `Pin message ${m.index}`,
    text: 'Pin',
  });
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
    const shownLines = m.content.split('\n').length;
    const long = m.content.length > 600 || shownLines > 12;
    // Scrollable, so reachable by keyboard.
    const pre = h('pre', { class: 'tool-out', tabindex: 0, 'aria-label': `Output of message ${m.index}` }, h('code', { text: m.content }));
    if (long) {
      const d = h(
        'details',
        { class: 'tool-result' },
        // A cut output's own line count, not its shown copy's: "87 lines" would read as the whole output.
        h('summary', {
          text: `Tool output · ${(m.lines ?? shownLines).toLocaleString('en-US')} lines${m.truncated ? ', head and tail shown' : ''}`,
        }),
        pre,
      );
      el.append(d);
    } else {
      el.append(pre);
      if (m.truncated) el.append(h('div', { class: 'muted', text: '(output cut)' }));
    }
  } else if (m.content) {
    const body = h('div', { class: 'md' });
    fillMarkdown(body, m.kind === 'summary' ? summaryMarkdown(m.content) : m.content);
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
      el.append(
        h(
          'details',
          { class: 'tool-call' },
          h(
            'summary',
            null,
            h('span', { class: 'tool-name', text: c.name }),
            h('span', { class: 'muted', text: ` ${oneLine(c.arguments)}` }),
          ),
          h('pre', null, h('code', { text: args })),
        ),
      );
    }
  }
  if (m.kind === 'summary' && (m.archivedCount ?? 0) > 0) {
    const expanded = ctx.ui.expanded.includes(m.id);
    const btn = h('button', {
      class: 'link-btn act-expand',
      type: 'button',
      'data-act': 'expand',
      'aria-expanded': String(expanded),
      text: expanded ? `Hide ${m.archivedCount} archived originals` : `Show ${m.archivedCount} archived originals`,
    });
    el.append(btn);
    if (expanded) {
      const arch = ctx.model.archived.get(m.id);
      const box = h('div', { class: 'archived', role: 'list', 'aria-label': 'Archived originals' });
      if (!arch) box.append(h('div', { class: 'muted', text: 'Loading…' }));
      else
        for (const a of arch) {
          const item = h(
            'div',
            { class: `arch role-${a.role}`, role: 'listitem' },
            h('span', { class: 'role', text: a.role }),
            h('span', { class: 'muted', text: ` · ${formatTokens(a.tokens)} tok` }),
          );
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

export function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ');
  return t.length > 80 ? `${t.slice(0, 77)}…` : t;
}

export function preview(m: ViewMessage): string {
  return (m.toolCalls ?? []).map((c) => `${c.name}(${c.arguments})`).join('\n');
}

export function approvalCard(a: ApprovalView): HTMLElement {
  const card = h('div', { class: 'approval', role: 'group', 'aria-label': `Approve ${a.tool}?`, 'data-call': a.callId });
  card.append(h('div', { class: 'ap-head' }, h('strong', { text: a.tool }), h('span', { text: ` ${a.summary}` })));
  if (a.command) card.append(h('pre', { class: 'ap-command' }, h('code', null, ...commandView(a.command))));
  if (a.path) card.append(h('div', { class: 'ap-path', text: a.path }));
  if (a.diff) card.append(diffView(a.diff));
  const reason = h('input', {
    class: 'ap-reason',
    type: 'text',
    placeholder: 'Reason (optional, sent to the agent)',
    'aria-label': 'Reason for rejecting',
  });
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

/** Wrapped, with line breaks, control characters and long blank runs shown as marked stand-ins (src/protocol/commandText.ts). */
function commandView(command: string): (HTMLElement | string)[] {
  return commandParts(command).map((p) =>
    p.hidden === undefined ? p.text : h('span', { class: 'ap-mark', title: p.hidden, text: p.text }),
  );
}

function diffView(diff: string): HTMLElement {
  const pre = h('pre', { class: 'diff', 'aria-label': 'Proposed change (unified diff)' });
  const lines = diff.split('\n');
  const max = 800;
  for (const line of lines.slice(0, max)) {
    const cls =
      line.startsWith('+++') || line.startsWith('---')
        ? 'd-file'
        : line.startsWith('@@')
          ? 'd-hunk'
          : line.startsWith('+')
            ? 'd-add'
            : line.startsWith('-')
              ? 'd-del'
              : 'd-ctx';
    pre.append(h('span', { class: cls, text: line }), '\n');
  }
  if (lines.length > max) pre.append(h('span', { class: 'muted', text: `… ${lines.length - max} more lines` }));
  return pre;
}
