import { compactionOpen, formatTokens, summaryTokens, type BlockView } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { h, setAttr, setText } from '../dom';
import { projectionMarks, thresholdTokens, type Projection } from '../projection';

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
  /** Says, while the handle is away from an open compaction's split, which of the two the figures and Adopt are about. */
  private away = h('p', { class: 'gauge-note', role: 'status' });

  constructor(private ctx: Ctx) {
    const meters = [this.used.el, this.projected.el, this.io.el, this.ratio.el];
    this.el = h('section', { class: 'gauges', 'aria-label': 'Token gauges' }, ...meters, this.away);
    this.away.hidden = true;
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

    // One projection for every gauge, the timeline's handle and the overview: at an open compaction's split its own
    // figures (what Adopt does), elsewhere the view's estimate for the handle. Head → summary compares the messages
    // replaced with the summary replacing them; workers' prompts (which replay what precedes a block) measure neither.
    const p = this.ctx.projection();
    const own = p.source === 'compaction';
    // '≈': the open compaction's blocks still running count the volume asked of them; 'est.': the view's guess.
    const approx = own && p.approximate ? '≈' : '';
    const est = own ? '' : ' est.';
    const said = own ? (p.approximate ? ' (blocks still running count what their plan asked for)' : '') : ' (estimate)';
    // A new session, or a split that keeps everything: "≈0 blocks" and "0 → 0 est." said nothing true.
    const nothing = !own && p.headTokens <= 0;
    this.projected.marks(marks);
    const n = `${p.blocks} block${p.blocks === 1 ? '' : 's'}`;
    this.projected.set(
      p.projected,
      0,
      win,
      own
        ? `${formatTokens(p.projected)} tokens (${pct(p.projected)}) after adopting the open compaction of ${formatTokens(p.headTokens)} ` +
            `tokens in ${n}${said}`
        : `${formatTokens(p.projected)} tokens (${pct(p.projected)}) after compacting ${formatTokens(p.headTokens)} tokens before ` +
            `message ${p.tailStartIndex} in ${blockCount(p)}`,
      `${approx}${formatTokens(p.projected)} · ${pct(p.projected)} · ${own ? n : nothing ? 'nothing to compact' : blockCount(p, '≈')}` +
        projectionMarks(p, s.compaction).est,
    );
    this.io.set(
      p.summaryTokens,
      0,
      Math.max(1, p.headTokens),
      nothing
        ? 'nothing to compact'
        : `head ${formatTokens(p.headTokens)} tokens, summary ${approx}${formatTokens(p.summaryTokens)} tokens${said}`,
      nothing ? '—' : `${formatTokens(p.headTokens)} → ${approx}${formatTokens(p.summaryTokens)}${est}`,
    );
    const c = s.compaction;
    const awayFrom = !own && c && compactionOpen(c) && c.tailStartIndex !== undefined ? c.tailStartIndex : null;
    this.away.hidden = awayFrom === null;
    if (awayFrom !== null)
      setText(
        this.away,
        `These figures are for a compaction at the handle (#${p.tailStartIndex}): Compact here plans it. ` +
          `Adopt applies the open compaction, split at #${awayFrom}.`,
      );
    const ratio = p.ratio;
    this.ratio.set(
      ratio,
      0,
      Math.max(20, Math.ceil(ratio)),
      ratio > 0 ? `${approx}${ratio.toFixed(1)} to 1, head over summary${said}` : 'nothing to compact',
      ratio > 0 ? `${approx}${ratio.toFixed(1)}×${est}` : '—',
    );
  }
}

/** "27 blocks", or about that many while the planner picks the block size. */
export function blockCount(p: Projection, about = 'about '): string {
  return `${p.blocksEstimated ? about : ''}${p.blocks} block${p.blocks === 1 ? '' : 's'}`;
}

/** A block's summary size (summaryTokens), or the tokens written so far while it streams. */
export function blockSummaryTokens(b: BlockView): number {
  return summaryTokens(b)?.n ?? (b.status === 'streaming' ? b.streamedTokens : 0);
}
