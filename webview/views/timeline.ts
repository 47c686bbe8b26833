/**
 * The timeline: one canvas for all segments (5,000 messages is one pass of
 * fillRect), a DOM split handle (role="slider") over it, a head shade, a block
 * band while a compaction runs, and a hover tooltip. Zoom and pan are a
 * virtual strip: only the visible token range is drawn. Painting, geometry,
 * input and the tooltip text live in the timeline*.ts files next to this one.
 */
import { formatTokens, type StrategyName } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { button, h, setAttr, setDisabled, setText } from '../dom';
import { nearestAllowedByIndex, nearestAllowedByOffset, projectionMarks } from '../projection';
import { post } from '../vscodeApi';
import { TimelineGeometry } from './timelineGeometry';
import { blockCount } from './gauges';
import type { TimelineInputTarget } from './timelineInput';
import { announceMessage, bindHandle, bindSurface } from './timelineInput';
import type { Palette } from './timelinePaint';
import { paintTimeline, readPalette } from './timelinePaint';
import { Tooltip } from './timelineText';

export { describe, preview } from './timelineText';

const STRATEGY_LABELS: Record<StrategyName, string> = {
  'token-fraction': 'Recent 30% of tokens',
  'recent-turns': 'Recent 2 turns',
  'user-messages': 'Keep my messages',
};

export class Timeline implements TimelineInputTarget {
  readonly el: HTMLElement;
  readonly geo: TimelineGeometry;
  readonly canvas = h('canvas', { class: 'tl-canvas', 'aria-hidden': 'true' });
  readonly surface: HTMLElement;
  readonly shade = h('div', { class: 'tl-shade', 'aria-hidden': 'true' });
  readonly handle: HTMLElement;
  readonly tip = new Tooltip();
  readonly scroller = h('div', { class: 'tl-scroll', 'aria-hidden': 'true' });
  private spacer = h('div', { class: 'tl-spacer' });
  private live = h('div', { class: 'sr-only', 'aria-live': 'polite' });
  private strategy: HTMLElement;
  private resetBtn: HTMLElement;
  private compactBtn: HTMLElement;
  private info = h('span', { class: 'tl-info' });
  private zoomLabel = h('span', { class: 'tl-zoom-label', 'aria-live': 'polite' });
  private palette: Palette | null = null;
  private hover = -1;
  private drawQueued = 0;

  constructor(readonly ctx: Ctx) {
    this.geo = new TimelineGeometry(ctx);
    this.handle = h(
      'div',
      {
        class: 'tl-handle',
        role: 'slider',
        tabindex: 0,
        'aria-label': 'Split point',
        'aria-orientation': 'horizontal',
        'aria-valuemin': 0,
        'aria-valuemax': 0,
        'aria-valuenow': 0,
      },
      h('span', { class: 'tl-grip', 'aria-hidden': 'true' }),
    );
    this.surface = h(
      'div',
      {
        class: 'tl-surface',
        tabindex: 0,
        role: 'group',
        'aria-roledescription': 'timeline',
        'aria-label': 'Timeline of messages. Left and Right select a message, Enter opens it in the chat, E expands a summary.',
        'aria-describedby': 'tl-tip',
      },
      this.canvas,
      this.shade,
      this.handle,
    );
    this.scroller.append(this.spacer);
    this.strategy = this.strategySelect();
    this.resetBtn = button('Reset', { secondary: true, title: "Move the handle back to the strategy's choice", cls: 'tl-reset' });
    this.resetBtn.addEventListener('click', () => this.ctx.setTail(null));
    this.compactBtn = button('Compact here', { title: 'Compact everything left of the split point', cls: 'tl-compact' });
    this.compactBtn.addEventListener('click', () => this.compactHere());
    const zoomOut = button('−', { secondary: true, ariaLabel: 'Zoom out', title: 'Zoom out (Ctrl+wheel)', cls: 'tl-zoom' });
    const zoomIn = button('+', { secondary: true, ariaLabel: 'Zoom in', title: 'Zoom in (Ctrl+wheel)', cls: 'tl-zoom' });
    zoomOut.addEventListener('click', () => this.zoomBy(0.5, 0.5));
    zoomIn.addEventListener('click', () => this.zoomBy(2, this.geo.handleFrac()));
    const legend = h(
      'div',
      { class: 'tl-legend', 'aria-hidden': 'true' },
      ...(['user', 'assistant', 'tool', 'summary', 'pinned', 'system'] as const).map((k) => h('span', { class: `lg lg-${k}` }, h('i'), k)),
    );
    const foot = h(
      'div',
      { class: 'tl-foot' },
      this.info,
      h('span', { class: 'spacer' }),
      h('span', { class: 'tl-zoomer' }, zoomOut, this.zoomLabel, zoomIn),
    );
    this.el = h(
      'section',
      { class: 'timeline', 'aria-label': 'Timeline and split point' },
      h('div', { class: 'tl-toolbar' }, this.strategy, this.resetBtn, this.compactBtn),
      h('div', { class: 'tl-wrap' }, this.surface, this.tip.el),
      this.scroller,
      foot,
      legend,
      this.live,
    );
    bindHandle(this);
    bindSurface(this);
    this.observe();
  }

  private strategySelect(): HTMLElement {
    const sel = h('vscode-single-select', {
      class: 'tl-strategy',
      'aria-label': 'Split strategy',
      label: 'Split strategy',
      title: 'Split strategy: resets the handle to its choice',
    });
    for (const [value, label] of Object.entries(STRATEGY_LABELS)) {
      const o = h('vscode-option', { value });
      o.textContent = label;
      sel.append(o);
    }
    sel.addEventListener('change', () => {
      const v = (sel as unknown as { value: string }).value as StrategyName;
      const snap = this.ctx.model.snap;
      if (!snap || v === snap.split.strategy) return;
      this.ctx.setTail(null);
      post({ type: 'set-strategy', strategy: v });
    });
    return sel;
  }

  private observe(): void {
    this.scroller.addEventListener('scroll', () => {
      const max = this.scroller.scrollWidth - this.scroller.clientWidth;
      this.ctx.ui.scrollFrac = max > 0 ? this.scroller.scrollLeft / max : 0;
      this.ctx.save();
      this.positionHandle();
      this.draw();
    });
    new ResizeObserver(() => {
      const w = Math.max(50, Math.round(this.surface.clientWidth));
      if (w !== this.geo.width) {
        this.geo.width = w;
        this.layoutZoom();
        this.drawNow();
        this.positionHandle();
      }
    }).observe(this.surface);
    // Theme changes swap the CSS variables on <body>.
    new MutationObserver(() => {
      this.palette = null;
      this.draw();
    }).observe(document.body, { attributes: true, attributeFilter: ['class', 'data-vscode-theme-kind'] });
  }

  zoomBy(factor: number, anchorFrac: number): void {
    if (!this.geo.zoomBy(factor, anchorFrac)) return;
    this.ctx.save();
    this.relayout(true);
  }

  private layoutZoom(): void {
    const z = this.ctx.ui.zoom;
    setText(this.zoomLabel, `${z < 10 ? z.toFixed(z % 1 ? 1 : 0) : Math.round(z)}×`);
    this.scroller.hidden = z <= 1;
    this.spacer.style.width = `${Math.round(this.geo.contentWidth())}px`;
    if (z > 1) {
      const max = this.geo.contentWidth() - this.geo.width;
      const want = Math.round(this.ctx.ui.scrollFrac * max);
      if (Math.abs(this.scroller.scrollLeft - want) > 1) this.scroller.scrollLeft = want;
    }
  }

  private relayout(paint: boolean): void {
    this.layoutZoom();
    if (paint) this.drawNow();
    this.positionHandle();
  }

  render(): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    const sel = this.strategy as unknown as { value: string };
    if (sel.value !== s.split.strategy) sel.value = s.split.strategy;
    this.geo.width = Math.max(50, Math.round(this.surface.clientWidth || this.geo.width));
    this.relayout(true);
  }

  /** Coalesces redraws to one per frame. */
  draw(): void {
    if (this.drawQueued) return;
    this.drawQueued = requestAnimationFrame(() => {
      this.drawQueued = 0;
      this.drawNow();
    });
  }

  drawNow(): void {
    this.palette ??= readPalette(this.el);
    paintTimeline(this.canvas, this.ctx, this.geo, { palette: this.palette, hover: this.hover, selected: this.selectedIndex() });
  }

  setHover(index: number): void {
    if (index === this.hover) return;
    this.hover = index;
    this.draw();
  }

  selectedIndex(): number {
    const id = this.ctx.ui.selectedId;
    if (!id) return -1;
    const msgs = this.ctx.model.snap?.messages;
    if (!msgs) return -1;
    // A find over 5,000 messages is microseconds: no index needed.
    return msgs.findIndex((m) => m.id === id);
  }

  /** Hot path: moves the handle and shade; no canvas redraw. */
  positionHandle(): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    const tail = this.ctx.tail();
    const allowed = s.split.allowed;
    const n = s.messages.length;
    const w = this.geo.width;
    const x = Math.max(-2, Math.min(w + 2, this.geo.xOfBoundary(tail)));
    this.handle.style.setProperty('--x', `${x.toFixed(1)}px`);
    this.shade.style.setProperty('--x', `${Math.max(0, x).toFixed(1)}px`);
    this.handle.classList.toggle('offscreen', x < 0 || x > w);
    const min = allowed.length ? allowed[0]! : tail;
    const max = allowed.length ? allowed[allowed.length - 1]! : tail;
    setAttr(this.handle, 'aria-valuemin', String(min));
    setAttr(this.handle, 'aria-valuemax', String(max));
    setAttr(this.handle, 'aria-valuenow', String(tail));
    const p = this.ctx.projection();
    const prefix = this.ctx.model.prefix;
    // Kept verbatim: all but the head, so the frame and kept user messages count too.
    const keptTok = prefix.total - p.headTokens;
    const estimate = projectionMarks(p, s.compaction).est ? ' (an estimate: Adopt applies the open compaction at its own split)' : '';
    const summarized = `${formatTokens(p.headTokens)} tokens summarized in ${blockCount(p)}${estimate}`;
    setAttr(this.handle, 'aria-valuetext', `Tail starts at message ${tail} of ${n}: ${summarized}, ${formatTokens(keptTok)} kept verbatim`);
    const dragged = this.ctx.movedTail() !== null;
    this.handle.classList.toggle('moved', dragged);
    setDisabled(this.resetBtn, !dragged);
    const busy = !!s.compaction && (s.compaction.state === 'running' || s.compaction.state === 'judging');
    setDisabled(this.compactBtn, p.headTokens <= 0 || busy);
    setAttr(this.handle, 'aria-disabled', allowed.length === 0 ? 'true' : 'false');
    setText(
      this.info,
      `${n.toLocaleString('en-US')} msgs · ${formatTokens(prefix.total)} tok · split @ ${tail}${dragged ? ' (moved)' : ''}`,
    );
  }

  private compactHere(): void {
    if (!this.ctx.model.snap) return;
    // Not moved: the strategy's own split, which the host computes (user-messages keeps messages before its tail
    // start, and a manual split there would compact them).
    post({ type: 'compact', focus: null, tailStartIndex: this.ctx.movedTail() });
  }

  step(delta: number | 'home' | 'end'): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    const allowed = s.split.allowed;
    if (allowed.length === 0) return;
    const tail = this.ctx.tail();
    const cur = nearestAllowedByIndex(allowed, tail);
    let k: number;
    if (delta === 'home') k = 0;
    else if (delta === 'end') k = allowed.length - 1;
    else if (allowed[cur] === tail) k = cur + delta;
    // Between allowed points: the first step lands on the neighbour in that direction.
    else if (delta > 0) k = (allowed[cur]! > tail ? cur : cur + 1) + (delta - 1);
    else k = (allowed[cur]! < tail ? cur : cur - 1) + (delta + 1);
    k = Math.max(0, Math.min(allowed.length - 1, k));
    this.moveTo(allowed[k]!);
    this.ensureHandleVisible();
  }

  private moveTo(tail: number): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    if (tail === this.ctx.tail()) return;
    const t0 = performance.now();
    this.ctx.setTail(tail === s.split.tailStartIndex ? null : tail);
    performance.measure('splitpoint:drag-step', { start: t0, end: performance.now() });
  }

  dragTo(clientX: number): void {
    const s = this.ctx.model.snap;
    if (!s || s.split.allowed.length === 0) return;
    const x = clientX - this.surface.getBoundingClientRect().left;
    const k = nearestAllowedByOffset(s.split.allowed, this.ctx.model.prefix, this.geo.offsetOfX(x));
    if (k >= 0) this.moveTo(s.split.allowed[k]!);
  }

  private ensureHandleVisible(): void {
    if (this.ctx.ui.zoom <= 1) return;
    const x = this.geo.xOfBoundary(this.ctx.tail());
    if (x >= 10 && x <= this.geo.width - 10) return;
    this.ctx.ui.scrollFrac = this.geo.scrollFracCentring(this.ctx.tail());
    this.relayout(true);
  }

  /** Selection changed elsewhere: redraw outline, scroll it into view when zoomed, announce it. */
  onSelection(index: number): void {
    if (this.ctx.model.snap?.messages[index]) {
      announceMessage(this, index);
      const x = this.geo.xOfBoundary(index);
      if (this.ctx.ui.zoom > 1 && (x < 0 || x > this.geo.width)) {
        this.ctx.ui.scrollFrac = this.geo.scrollFracCentring(index);
        this.relayout(false);
      }
    }
    this.draw();
  }

  announce(text: string): void {
    setText(this.live, text);
  }
}
