/** The pinned block: what compaction can never drop. Add, edit, unpin. */
import type { PinView } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { button, clear, h, setText } from '../dom';
import { post } from '../vscodeApi';
import { PIN_KINDS as KINDS } from '../../src/protocol/vocabulary';

export class Pins {
  readonly el: HTMLElement;
  private list = h('ul', { class: 'pin-list', 'aria-label': 'Pinned items' });
  private count = h('span', { class: 'pin-count' });
  private kind: HTMLElement;
  private input = h('input', {
    class: 'pin-input',
    type: 'text',
    placeholder: 'Pin a constraint or open loop…',
    'aria-label': 'New pin text',
  });
  private editing: string | null = null;

  constructor(private ctx: Ctx) {
    this.kind = h('vscode-single-select', { class: 'pin-kind', 'aria-label': 'Kind for new pins', label: 'Kind for new pins' });
    for (const k of KINDS) {
      const o = h('vscode-option', { value: k });
      o.textContent = k;
      this.kind.append(o);
    }
    (this.kind as unknown as { value: string }).value = ctx.ui.pinKind;
    this.kind.addEventListener('change', () => {
      ctx.ui.pinKind = (this.kind as unknown as { value: string }).value as PinView['kind'];
      ctx.save();
    });
    const add = button('Pin', { cls: 'pin-add', title: 'Add to the pinned block' });
    const submit = () => {
      const t = this.input.value.trim();
      if (!t) return;
      post({ type: 'pin', text: t, kind: ctx.ui.pinKind, messageId: null });
      this.input.value = '';
    };
    add.addEventListener('click', submit);
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        submit();
      }
    });
    this.el = h(
      'details',
      { class: 'pins', open: ctx.ui.pinsOpen },
      h('summary', null, h('span', { text: 'Pinned' }), this.count),
      this.list,
      h('div', { class: 'pin-new' }, this.kind, this.input, add),
    );
    this.el.addEventListener('toggle', () => {
      ctx.ui.pinsOpen = (this.el as HTMLDetailsElement).open;
      ctx.save();
    });
  }

  render(): void {
    const pins = this.ctx.model.snap?.pins ?? [];
    setText(this.count, ` (${pins.length})`);
    clear(this.list);
    if (pins.length === 0)
      this.list.append(h('li', { class: 'muted empty', text: 'Nothing pinned. Pin a message or a selected passage from the chat.' }));
    for (const p of pins) this.list.append(this.item(p));
  }

  private item(p: PinView): HTMLElement {
    const li = h('li', { class: `pin pin-${p.kind}`, 'data-pin': p.id });
    const badge = h('span', { class: `pin-badge k-${p.kind}`, text: p.kind });
    if (this.editing === p.id) {
      const ta = h('textarea', { class: 'pin-edit', rows: 3, 'aria-label': 'Edit pinned item' });
      ta.value = p.text;
      const save = button('Save', { cls: 'pin-save' });
      const cancel = button('Cancel', { secondary: true });
      const doSave = () => {
        const t = ta.value.trim();
        if (t && t !== p.text) post({ type: 'edit-pin', pinId: p.id, text: t });
        this.editing = null;
        this.render();
      };
      save.addEventListener('click', doSave);
      cancel.addEventListener('click', () => {
        this.editing = null;
        this.render();
      });
      ta.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && !e.shiftKey) {
          e.preventDefault();
          doSave();
        } else if (e.key === 'Escape') {
          this.editing = null;
          this.render();
        }
      });
      li.append(badge, ta, h('div', { class: 'row' }, save, cancel));
      requestAnimationFrame(() => ta.focus());
      return li;
    }
    const edit = h('button', { class: 'link-btn', type: 'button', 'aria-label': `Edit pin: ${p.text.slice(0, 40)}`, text: 'Edit' });
    edit.addEventListener('click', () => {
      this.editing = p.id;
      this.render();
    });
    const unpin = h('button', { class: 'link-btn', type: 'button', 'aria-label': `Unpin: ${p.text.slice(0, 40)}`, text: 'Unpin' });
    unpin.addEventListener('click', () => post({ type: 'unpin', pinId: p.id }));
    li.append(
      badge,
      h('span', { class: 'pin-text', text: p.text }),
      h('span', { class: 'pin-src muted', text: p.source === 'agent' ? 'agent' : '' }),
      h('span', { class: 'pin-actions' }, edit, unpin),
    );
    return li;
  }
}
