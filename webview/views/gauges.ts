import { compactionOpen, formatTokens, isSettled, summaryTokens, type BlockView, type CompactionView } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { h, setAttr, setText } from '../dom';
import { thresholdTokens, type Projection } from '../projection';

export interface Meter {
  el: HTMLElement;
  set(now: number, min: number, max: number, valueText: string, display: string): void;
  marks(marks: { name: string; at: number }[]): void;
}

/** A role="meter" bar: value, accessible value text, optional threshold marks. */
export function meter(label: string, cls: string, short = label): Meter {
  const fill = h('div', { class: 'meter-fill' });
  const track = h('div', { class: 'meter-track' }, fill);
  const value = h('span', { class: 'meter-value' });
  const el = h(
    'div',
    { class: `meter ${cls}`, role: 'meter', 'aria-label': label, 'aria-valuemin': 0, 'aria-valuemax': 1, 'aria-valuenow': 0 },
    h('div', { class: 'meter-head' }, h('span', { class: 'meter-label', 'aria-hidden': 'true', title: label, text: short }), value),
    track,
  );
  let markKey = '';
  return {
    el,
    set(now, min, max, valueText, display) {
      setAttr(el, 'aria-valuemin', String(min));
      setAttr(el, 'aria-valuemax', String(max));
      setAttr(el, 'aria-valuenow', String(Math.round(now * 100) / 100));
      setAttr(el, 'aria-valuetext', valueText);
      setText(value, display);
      const frac = max > min ? Math.max(0, Math.min(1, (now - min) / (max - min))) : 0;
      fill.style.setProperty('--fill', frac.toFixed(4));
    },
    marks(marks) {
      const key = marks.map((m) => `${m.name}@${m.at.toFixed(4)}`).join('|');
      if (key === markKey) return;
      markKey = key;
      for (const old of Array.from(track.querySelectorAll('.meter-mark'))) old.remove();
      for (const m of marks) {
        const mark = h('span', {
          class: `meter-mark mark-${m.name}`,
          title: `${m.name} ${(m.at * 100).toFixed(0)}%`,
          'aria-hidden': 'true',
        });
        mark.style.setProperty('--at', Math.max(0, Math.min(1, m.at)).toFixed(4));
        track.append(mark);
      }
    },
  };
}

export class Gauges {
  readonly el: HTMLElement;
  private used = meter('Context used', 'm-used', 'Used');
  private projected = meter('Projected after compaction', 'm-projected', 'Projected');
  private io = meter('Head → summary tokens', 'm-io', 'Head → summary');
  private ratio = meter('Compression ratio', 'm-ratio', 'Ratio');

  constructor(private ctx: Ctx) {
    this.el = h('section', { class: 'gauges', 'aria-label': 'Token gauges' }, this.used.el, this.projected.el, this.io.el, this.ratio.el);
  }

  /** Hot path (every drag step): attribute writes only, no layout reads. */
  update(): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    const g = s.gauge;
    const win = g.window > 0 ? g.window : Math.max(1, g.used);
    const marks = [
      { name: 'lo', at: thresholdTokens(g.lo, win) / win },
      { name: 'hi', at: thresholdTokens(g.hi, win) / win },
      { name: 'block', at: thresholdTokens(g.block, win) / win },
    ];
    const pct = (n: number) => `${((n / win) * 100).toFixed(1)}%`;
    this.used.marks(marks);
    this.used.set(
      g.used,
      0,
      win,
      `${formatTokens(g.used)} of ${formatTokens(win)} tokens (${pct(g.used)})`,
      `${formatTokens(g.used)} / ${formatTokens(win)} · ${pct(g.used)}`,
    );
    this.used.el.classList.toggle('over-hi', g.used >= thresholdTokens(g.hi, win));
    this.used.el.classList.toggle('over-block', g.used >= thresholdTokens(g.block, win));

    const p = this.ctx.projection();
    // Honest numbers: the head (the messages being replaced) against the summary that replaces them.
    // Workers' prompt sizes (which replay whatever precedes each block) are not a measure of either. A compaction no
    // longer open (adopted, cancelled, failed; Dismiss only hides those) says nothing about the context as it is now.
    const c = s.compaction && compactionOpen(s.compaction) ? s.compaction : null;
    this.projected.marks(marks);
    // An open compaction is what Adopt would do: its own blocks and summaries, unless the handle was dragged elsewhere.
    const adoptable = c && c.blocks.length > 0 && this.ctx.movedTail() === null ? openProjection(c, g.used) : null;
    if (adoptable) {
      const n = `${c!.blocks.length} block${c!.blocks.length === 1 ? '' : 's'}`;
      const { projected, planned } = adoptable;
      this.projected.set(
        projected,
        0,
        win,
        `${formatTokens(projected)} tokens (${pct(projected)}) after adopting the open compaction of ${formatTokens(c!.headTokens)} tokens ` +
          `in ${n}${planned ? ', with the summary volume its plan asked for' : ''}`,
        `${planned ? '≈' : ''}${formatTokens(projected)} · ${pct(projected)} · ${n}`,
      );
    } else
      this.projected.set(
        p.projected,
        0,
        win,
        `${formatTokens(p.projected)} tokens (${pct(p.projected)}) after compacting ${formatTokens(p.headTokens)} tokens before message ` +
          `${p.tailStartIndex} in ${blockCount(p)}`,
        `${formatTokens(p.projected)} · ${pct(p.projected)} · ${blockCount(p, '≈')}`,
      );

    let headTok: number;
    let sumTok: number;
    let estimated: boolean;
    if (c && c.blocks.length > 0) {
      headTok = c.headTokens || c.blocks.reduce((a, b) => a + b.tokens, 0);
      sumTok = c.totals?.summaryTokens || c.blocks.reduce((a, b) => a + blockSummaryTokens(b), 0);
      estimated = false;
    } else {
      headTok = p.headTokens;
      sumTok = p.summaryTokens;
      estimated = true;
    }
    const est = estimated ? ' (estimate)' : '';
    this.io.set(
      sumTok,
      0,
      Math.max(1, headTok),
      `head ${formatTokens(headTok)} tokens, summary ${formatTokens(sumTok)} tokens${est}`,
      `${formatTokens(headTok)} → ${formatTokens(sumTok)}${estimated ? ' est.' : ''}`,
    );

    // Head ÷ summary. While blocks still run, only finished blocks count: their own tokens over their summaries.
    let finHead = 0;
    let finSum = 0;
    if (c && !c.totals) {
      for (const b of c.blocks) {
        if (b.summary === null) continue;
        finHead += b.tokens;
        finSum += blockSummaryTokens(b);
      }
    }
    const ratio = c?.totals
      ? c.totals.compressionRatio
      : c && c.blocks.length
        ? finSum > 0
          ? finHead / finSum
          : 0
        : sumTok > 0
          ? headTok / sumTok
          : 0;
    const max = Math.max(20, Math.ceil(ratio));
    this.ratio.set(
      ratio,
      0,
      max,
      ratio > 0 ? `${ratio.toFixed(1)} to 1, head over summary${est}` : 'nothing to compact',
      ratio > 0 ? `${ratio.toFixed(1)}×${estimated ? ' est.' : ''}` : '—',
    );
  }
}

/**
 * The context after adopting `c`: what it replaces out, its merged summary in once every block has one; before that,
 * the finished blocks' summaries and, for the rest, their share of the volume the plan asked for (`planned`).
 */
function openProjection(c: CompactionView, used: number): { projected: number; planned: boolean } {
  if (c.totals) return { projected: Math.max(0, used - c.headTokens + c.totals.summaryTokens), planned: false };
  const asked = c.plan?.chosen.summaryTokens ?? 0;
  const head = c.blocks.reduce((a, b) => a + b.tokens, 0);
  let summary = 0;
  for (const b of c.blocks) summary += isSettled(b) ? (summaryTokens(b)?.n ?? 0) : head > 0 ? (asked * b.tokens) / head : 0;
  return { projected: Math.max(0, Math.round(used - c.headTokens + summary)), planned: true };
}

/** "27 blocks", or about that many while the planner picks the block size. */
export function blockCount(p: Projection, about = 'about '): string {
  return `${p.blocksEstimated ? about : ''}${p.blocks} block${p.blocks === 1 ? '' : 's'}`;
}

/** A block's summary size (summaryTokens), or the tokens written so far while it streams. */
export function blockSummaryTokens(b: BlockView): number {
  return summaryTokens(b)?.n ?? (b.status === 'streaming' ? b.streamedTokens : 0);
}
