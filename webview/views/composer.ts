/** The input: Enter sends, Shift+Enter breaks a line, Up/Down walk the history, `/` completes slash commands. */
import { parseSlashCommand, SLASH_COMMANDS } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { button, clear, h, setDisabled, setText } from '../dom';
import { post } from '../vscodeApi';

const HISTORY_MAX = 100;

export class Composer {
  readonly el: HTMLElement;
  readonly input = h('textarea', {
    class: 'composer-input',
    rows: 2,
    placeholder: 'Ask the agent… (/ for commands, Enter to send, Shift+Enter for a new line)',
    'aria-label': 'Message to the agent',
    'aria-autocomplete': 'list',
    'aria-controls': 'slash-list',
    'aria-expanded': 'false',
    role: 'combobox',
  });
  private send = button('Send', { cls: 'send-btn', title: 'Send (Enter)' });
  private stop = button('Stop', { secondary: true, cls: 'stop-btn', title: 'Stop the agent (Esc)' });
  private menu = h('ul', { class: 'slash-list', id: 'slash-list', role: 'listbox', 'aria-label': 'Commands', hidden: true });
  private focusChip = h('div', { class: 'standing-focus', hidden: true });
  private hint = h('div', { class: 'composer-hint muted', 'aria-live': 'polite' });
  /** The compaction on screen when /compact was sent: the hint stays until another state of it (or a new one) arrives. */
  private compactHint: { id: string | null; state: string | null; note: string | null } | null = null;
  private histPos = -1;
  private histDraft = '';
  private active = 0;
  private options: { name: string; hint: string; description: string }[] = [];

  constructor(private ctx: Ctx) {
    this.input.value = ctx.ui.draft;
    this.send.addEventListener('click', () => this.submit());
    this.stop.addEventListener('click', () => post({ type: 'stop' }));
    this.input.addEventListener('input', () => {
      this.ctx.ui.draft = this.input.value;
      this.histPos = -1;
      this.ctx.save();
      this.updateMenu();
    });
    this.input.addEventListener('keydown', (e) => this.keys(e));
    // Closing is delayed so a click on a menu item lands first; if focus came
    // back to the input meanwhile, the menu stays.
    this.input.addEventListener('blur', () =>
      setTimeout(() => {
        if (document.activeElement !== this.input) this.closeMenu();
      }, 150),
    );
    this.el = h(
      'section',
      { class: 'composer', 'aria-label': 'Message input' },
      this.focusChip,
      this.menu,
      h('div', { class: 'composer-row' }, this.input, h('div', { class: 'composer-btns' }, this.send, this.stop)),
      this.hint,
    );
  }

  render(): void {
    const s = this.ctx.model.snap;
    const running = !!s?.agent.running;
    this.stop.hidden = !running;
    setDisabled(this.send, !s);
    clear(this.focusChip);
    if (s?.focus) {
      this.focusChip.hidden = false;
      const x = h('button', {
        class: 'link-btn',
        type: 'button',
        'aria-label': 'Clear standing focus',
        title: 'Clear the standing focus',
        text: '✕',
      });
      x.addEventListener('click', () => post({ type: 'clear-focus' }));
      this.focusChip.append(h('span', { class: 'muted', text: 'Standing focus: ' }), h('span', { class: 'focus-text', text: s.focus }), x);
    } else this.focusChip.hidden = true;
    this.clearCompactHint();
  }

  /** A notice is the host's answer to a /compact that started nothing: the "Compacting…" hint no longer holds. */
  noticeArrived(): void {
    if (!this.compactHint) return;
    this.compactHint = null;
    setText(this.hint, '');
  }

  /** "Compacting…" describes the wait; once the compaction has left `running` it is stale (the panel shows the result). */
  private clearCompactHint(): void {
    const c = this.ctx.model.snap?.compaction;
    const was = this.compactHint;
    // A held summary the /compact took to review keeps its id and state: its note says it was taken.
    if (!was || !c || c.state === 'running' || (c.id === was.id && c.state === was.state && c.note === was.note)) return;
    this.compactHint = null;
    setText(this.hint, '');
  }

  private submit(): void {
    const text = this.input.value;
    if (!text.trim()) return;
    const cmd = parseSlashCommand(text);
    if (cmd) {
      switch (cmd.command) {
        case 'compact': {
          const s = this.ctx.model.snap;
          post({ type: 'compact', focus: cmd.focus, tailStartIndex: this.ctx.movedTail() });
          setText(this.hint, cmd.focus ? `Compacting with focus “${cmd.focus}”` : 'Compacting…');
          this.compactHint = { id: s?.compaction?.id ?? null, state: s?.compaction?.state ?? null, note: s?.compaction?.note ?? null };
          break;
        }
        case 'unknown':
          this.ctx.notify('warning', `Unknown command /${cmd.name}. Try ${SLASH_COMMANDS.map((c) => c.name).join(', ')}.`);
          return;
      }
    } else post({ type: 'send', text });
    const hist = this.ctx.ui.history;
    if (hist[hist.length - 1] !== text) hist.push(text);
    if (hist.length > HISTORY_MAX) hist.splice(0, hist.length - HISTORY_MAX);
    this.histPos = -1;
    this.input.value = '';
    this.ctx.ui.draft = '';
    this.ctx.save(true);
    this.closeMenu();
  }

  private keys(e: KeyboardEvent): void {
    if (!this.menu.hidden && this.options.length) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        this.active = (this.active + (e.key === 'ArrowDown' ? 1 : this.options.length - 1)) % this.options.length;
        this.paintMenu();
        return;
      }
      if (e.key === 'Tab' || (e.key === 'Enter' && !e.shiftKey && this.needsCompletion())) {
        e.preventDefault();
        this.accept(this.active);
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        this.closeMenu();
        return;
      }
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.submit();
      return;
    }
    if (e.key === 'Escape' && this.ctx.model.snap?.agent.running) {
      e.preventDefault();
      post({ type: 'stop' });
      return;
    }
    const hist = this.ctx.ui.history;
    if (e.key === 'ArrowUp' && hist.length) {
      const before = this.input.value.slice(0, this.input.selectionStart);
      if (before.includes('\n')) return;
      e.preventDefault();
      if (this.histPos === -1) {
        this.histDraft = this.input.value;
        this.histPos = hist.length - 1;
      } else this.histPos = Math.max(0, this.histPos - 1);
      this.setValue(hist[this.histPos]!);
    } else if (e.key === 'ArrowDown' && this.histPos !== -1) {
      const after = this.input.value.slice(this.input.selectionEnd);
      if (after.includes('\n')) return;
      e.preventDefault();
      this.histPos++;
      if (this.histPos >= hist.length) {
        this.histPos = -1;
        this.setValue(this.histDraft);
      } else this.setValue(hist[this.histPos]!);
    }
  }

  private setValue(v: string): void {
    this.input.value = v;
    this.input.setSelectionRange(v.length, v.length);
    this.ctx.ui.draft = v;
    this.ctx.save();
  }

  /** Completion applies while the typed word is still a prefix of a command, not once it is complete. */
  private needsCompletion(): boolean {
    const v = this.input.value.trim();
    return this.options.some((o) => o.name !== v && o.name.startsWith(v));
  }

  private updateMenu(): void {
    const v = this.input.value;
    const m = /^\/(\S*)$/.exec(v);
    if (!m) return this.closeMenu();
    this.options = SLASH_COMMANDS.filter((c) => c.name.startsWith(`/${m[1]!.toLowerCase()}`)).map((c) => ({
      name: c.name,
      hint: c.hint,
      description: c.description,
    }));
    if (!this.options.length) return this.closeMenu();
    this.active = Math.min(this.active, this.options.length - 1);
    this.menu.hidden = false;
    this.input.setAttribute('aria-expanded', 'true');
    this.paintMenu();
  }

  private paintMenu(): void {
    clear(this.menu);
    this.options.forEach((o, i) => {
      const li = h(
        'li',
        { id: `slash-${i}`, role: 'option', class: i === this.active ? 'active' : '', 'aria-selected': String(i === this.active) },
        h('strong', { text: o.name }),
        h('span', { class: 'muted', text: ` ${o.hint.slice(o.name.length)} — ${o.description}` }),
      );
      li.addEventListener('mousedown', (e) => {
        e.preventDefault();
        this.accept(i);
      });
      this.menu.append(li);
    });
    this.input.setAttribute('aria-activedescendant', `slash-${this.active}`);
  }

  private accept(i: number): void {
    const o = this.options[i];
    if (!o) return;
    this.setValue(`${o.name} `);
    this.closeMenu();
    this.compactHint = null;
    setText(this.hint, `${o.hint} — Enter runs it; the focus text is optional, quotes too.`);
    this.input.focus();
  }

  private closeMenu(): void {
    if (this.menu.hidden) return;
    this.menu.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
  }
}
