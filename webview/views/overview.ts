/**
 * The side bar's one compact row: context used, where the split is and what
 * it would leave, and the compaction's status. It expands to the timeline
 * and the gauges; collapsed, the chat gets the room.
 */
import { compactionOpen, formatTokens, isSettled } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { projectionMarks } from '../projection';
import { h, setText } from '../dom';

export class Overview {
  readonly el: HTMLDetailsElement;
  private line = h('span', { class: 'ov-line' });
  private status = h('span', { class: 'ov-status' });

  constructor(
    private ctx: Ctx,
    body: HTMLElement[],
    onToggle: (open: boolean) => void,
  ) {
    // Collapsed until the user opens it: the chat comes first in the side bar.
    const open = ctx.ui.overviewOpen ?? false;
    this.el = h(
      'details',
      { class: 'overview', open },
      h('summary', { class: 'ov-summary', title: 'Timeline and gauges' }, this.line, this.status),
      ...body,
    );
    this.el.addEventListener('toggle', () => {
      ctx.ui.overviewOpen = this.el.open;
      ctx.save();
      onToggle(this.el.open);
    });
  }

  update(): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    const g = s.gauge;
    const win = g.window > 0 ? g.window : Math.max(1, g.used);
    const p = this.ctx.projection();
    const marks = projectionMarks(p, s.compaction);
    // A split whose kept messages alone pass the mark where the agent waits: compacting there cannot make room.
    const stillFull = p.headTokens > 0 && p.projected >= g.block * win;
    setText(
      this.line,
      `${formatTokens(g.used)} / ${formatTokens(win)} (${Math.round((g.used / win) * 100)}%) · ` +
        `split at #${this.ctx.tail()} → ${marks.approx}${formatTokens(p.projected)} after${marks.est}` +
        (stillFull ? ` (still over the ${Math.round(g.block * 100)}% the agent waits at: move the split later)` : ''),
    );
    this.line.classList.toggle('ov-full', stillFull);
    const c = s.compaction;
    const live = c && compactionOpen(c);
    const ready = c ? c.blocks.filter(isSettled).length : 0;
    setText(this.status, live ? ` · compaction ${c.state === 'running' ? `${ready}/${c.blocks.length}` : c.state}` : '');
  }
}
