/** Session picker, new session, connection state, undo. */
import type { SessionListItem } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { button, clear, h, setDisabled, setText } from '../dom';
import { post } from '../vscodeApi';

export class Header {
  readonly el: HTMLElement;
  private sessions: HTMLElement;
  private conn = h('span', { class: 'conn', role: 'status' });
  private undo = button('Undo compaction', { secondary: true, cls: 'undo-btn', title: 'Peel off the last compaction' });
  private depth = h('span', { class: 'muted depth' });
  private banner = h('div', { class: 'banner', role: 'alert', hidden: true });
  private key = '';

  constructor(private ctx: Ctx) {
    this.sessions = h('vscode-single-select', { class: 'session-select', 'aria-label': 'Session', label: 'Session' });
    this.sessions.addEventListener('change', () => {
      const v = (this.sessions as unknown as { value: string }).value;
      if (v && v !== this.ctx.model.snap?.session.id) post({ type: 'switch-session', sessionId: v });
    });
    const add = button('New', { secondary: true, cls: 'new-session', title: 'Start a new session', ariaLabel: 'New session' });
    add.addEventListener('click', () => post({ type: 'new-session' }));
    this.undo.addEventListener('click', () => post({ type: 'undo' }));
    this.el = h(
      'header',
      { class: 'app-header' },
      h('div', { class: 'row' }, this.sessions, add, h('span', { class: 'spacer' }), this.depth, this.undo),
      h('div', { class: 'row' }, this.conn),
      this.banner,
    );
  }

  render(): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    const list = s.sessions.some((x) => x.id === s.session.id) ? s.sessions : [s.session, ...s.sessions];
    const key = list.map((x) => `${x.id}:${x.title}:${x.messageCount}:${x.lastUsedAt ?? ''}:${x.bytes ?? ''}`).join('|');
    if (key !== this.key) {
      this.key = key;
      clear(this.sessions);
      for (const x of list) {
        const o = h('vscode-option', { value: x.id, description: sessionDescription(x, Date.now()) });
        o.textContent = x.title || x.id;
        this.sessions.append(o);
      }
    }
    (this.sessions as unknown as { value: string }).value = s.session.id;
    const c = s.connection;
    this.conn.className = `conn conn-${c.state}`;
    const model = s.settings.model ?? (c.state === 'error' ? 'no model' : 'asking the server…');
    setText(
      this.conn,
      `${c.state === 'ok' || c.state === 'error' ? '●' : '○'} ${model} @ ${s.settings.endpoint}` +
        `${c.state === 'error' && c.message ? ` — ${c.message}` : ''}`,
    );
    this.conn.title = `${s.settings.mode}, ${s.settings.layout}, ${s.settings.verbosity}${c.message ? ` · ${c.message}` : ''}`;
    this.conn.setAttribute('aria-label', `Connection ${c.state}${c.message ? `: ${c.message}` : ''}`);
    const busy = !!s.compaction && (s.compaction.state === 'running' || s.compaction.state === 'judging');
    this.undo.hidden = s.compactionDepth <= 0;
    setDisabled(this.undo, busy);
    setText(this.depth, s.compactionDepth > 0 ? `${s.compactionDepth} compaction${s.compactionDepth === 1 ? '' : 's'} in force` : '');
    this.banner.hidden = s.trusted;
    setText(this.banner, s.trusted ? '' : 'This workspace is not trusted: the agent cannot run tools here.');
  }
}

/** "42 messages · 180 KB · used 3 h ago": what tells sessions apart besides the title. */
export function sessionDescription(x: SessionListItem, now: number): string {
  const parts = [`${x.messageCount} message${x.messageCount === 1 ? '' : 's'}`];
  if (x.bytes !== undefined)
    parts.push(x.bytes >= 1024 * 1024 ? `${(x.bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.max(1, Math.round(x.bytes / 1024))} KB`);
  // Without a last use the creation time is all there is, and it is named as such.
  if (x.lastUsedAt !== undefined && x.lastUsedAt > 0) parts.push(`used ${ago(now - x.lastUsedAt)}`);
  else if (x.createdAt > 0) parts.push(`created ${ago(now - x.createdAt)}`);
  return parts.join(' · ');
}

function ago(ms: number): string {
  const m = Math.round(ms / 60_000);
  if (m < 1) return 'just now';
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.round(h / 24)} days ago`;
}
