/**
 * What the compaction would lose, in the side bar before Adopt: the headline
 * ("Dropped 7 of 212 facts: …"), the first dropped facts (each shows its
 * original message, and "Keep" pins it so every later summary must carry it),
 * and the review editor for the whole list.
 */
import type { CompactionView } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { button, clear, h } from '../dom';
import { post } from '../vscodeApi';

export function renderLoss(el: HTMLElement, c: CompactionView, ctx: Ctx): void {
  clear(el);
  const loss = c.loss;
  el.hidden = !loss;
  if (!loss) return;
  el.append(h('div', { class: `check ${loss.dropped > 0 ? 'bad' : 'ok'}`, text: loss.headline }));
  if (loss.first.length === 0) return;
  const list = h('ul', { class: 'cp-loss-list', 'aria-label': 'Facts the summaries dropped' });
  for (const f of loss.first) {
    // Found by id: a pin or an adoption since the report renumbers the messages, and an adopted one's are archived.
    const at = ctx.model.snap?.messages.findIndex((m) => m.id === f.messageId) ?? -1;
    const label = `${f.kind}: ${f.key}`;
    const show =
      at >= 0
        ? h('a', { href: '#', class: 'cp-loss-fact', title: f.text, text: label })
        : h('span', { class: 'cp-loss-fact', title: f.text, text: label });
    show.addEventListener('click', (e) => {
      e.preventDefault();
      if (at >= 0) ctx.selectMessage(at, { reveal: true });
    });
    const keep = button('Keep', { secondary: true, cls: 'cp-loss-keep', ariaLabel: `Keep ${f.key}: pin it so the summary must carry it` });
    keep.addEventListener('click', () => post({ type: 'pin', text: f.text, kind: 'constraint', messageId: f.messageId }));
    list.append(h('li', null, show, ' ', keep));
  }
  el.append(list);
  if (loss.dropped > loss.first.length) {
    const all = h('a', { href: '#', text: `All ${loss.dropped} in the review editor` });
    all.addEventListener('click', (e) => {
      e.preventDefault();
      post({ type: 'open-review' });
    });
    el.append(all);
  }
}
