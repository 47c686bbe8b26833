import { formatTokens, type ViewMessage } from '../../src/protocol/messages';
import { clear, h } from '../dom';

/** One line naming a message: position, kind, size. Shared by the tooltip and the screen-reader announcement. */
export function describe(m: ViewMessage): string {
  const kind =
    m.kind === 'summary' ? `summary${m.archivedCount ? ` of ${m.archivedCount} messages` : ''}` : m.kind === 'pinned' ? 'pinned' : m.role;
  return `#${m.index} ${kind} · ${formatTokens(m.tokens)} tokens${m.origin === 'kept' ? ' · kept' : ''}`;
}

export function preview(m: ViewMessage): string {
  let t = m.content;
  if (!t && m.toolCalls && m.toolCalls.length) t = m.toolCalls.map((c) => `${c.name}(${c.arguments})`).join(', ');
  t = t.replace(/\s+/g, ' ').trim();
  return t.length > 160 ? `${t.slice(0, 157)}…` : t || '(empty)';
}

/** The hover tooltip over the timeline (the surface's aria-describedby). */
export class Tooltip {
  readonly el = h('div', { class: 'tl-tip', role: 'tooltip', id: 'tl-tip', hidden: true });

  show(x: number, width: number, title: string, body: string): void {
    const tip = this.el;
    clear(tip);
    tip.append(h('strong', { text: title }), h('span', { text: body }));
    tip.hidden = false;
    const left = Math.max(0, Math.min(width - 220, x - 110));
    tip.style.setProperty('--x', `${left}px`);
  }

  hide(): void {
    if (!this.el.hidden) this.el.hidden = true;
  }
}
