/**
 * The timeline: one canvas for all segments (5,000 messages is one pass of
 * fillRect), a DOM split handle (role="slider") over it, a head shade, a block
 * band while a compaction runs, and a hover tooltip. Zoom and pan are a
 * virtual strip: only the visible token range is drawn.
 */
import type { StrategyName, ViewMessage } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { button, clear, h, setAttr, setDisabled, setText } from '../dom';
import { formatTokens, messageAtOffset, nearestAllowedByIndex, nearestAllowedByOffset } from '../projection';
import { post } from '../vscodeApi';

const STRATEGIES: { value: StrategyName; label: string }[] = [
  { value: 'token-fraction', label: 'Recent 30% of tokens' },
  { value: 'recent-turns', label: 'Recent 2 turns' },
  { value: 'user-messages', label: 'Keep my messages' },
];

const SEG_H = 26;
const BAND_H = 8;

interface Palette {
  user: string;
  assistant: string;
  tool: string;
  system: string;
  summary: string;
  pinned: string;
  bg: string;
  sep: string;
  focus: string;
  hover: string;
  kept: string;
  allowed: string;
  queued: string;
  streaming: string;
  done: string;
  failed: string;
  edited: string;
}

export class Timeline {
  readonly el: HTMLElement;
  private canvas = h('canvas', { class: 'tl-canvas', 'aria-hidden': 'true' });
  private surface: HTMLElement;
  private shade = h('div', { class: 'tl-shade', 'aria-hidden': 'true' });
  private handle: HTMLElement;
  private tip = h('div', { class: 'tl-tip', role: 'tooltip', id: 'tl-tip', hidden: true });
  private scroller = h('div', { class: 'tl-scroll', 'aria-hidden': 'true' });
  private spacer = h('div', { class: 'tl-spacer' });
  private live = h('div', { class: 'sr-only', 'aria-live': 'polite' });
  private strategy: HTMLElement;
  private resetBtn: HTMLElement;
  private compactBtn: HTMLElement;
  private info = h('span', { class: 'tl-info' });
  private zoomLabel = h('span', { class: 'tl-zoom-label', 'aria-live': 'polite' });
  private width = 300;
  private palette: Palette | null = null;
  private hover = -1;
  private dragging = false;
  private dragStartTail: number | null = null;
  private drawQueued = 0;

  constructor(private ctx: Ctx) {
    this.handle = h(
      'div',
      { class: 'tl-handle', role: 'slider', tabindex: 0, 'aria-label': 'Split point', 'aria-orientation': 'horizontal', 'aria-valuemin': 0, 'aria-valuemax': 0, 'aria-valuenow': 0 },
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

    this.strategy = h('vscode-single-select', { class: 'tl-strategy', 'aria-label': 'Split strategy', title: 'Split strategy: resets the handle to its choice' });
    for (const s of STRATEGIES) {
      const o = h('vscode-option', { value: s.value });
      o.textContent = s.label;
      this.strategy.append(o);
    }
    this.strategy.addEventListener('change', () => {
      const v = (this.strategy as unknown as { value: string }).value as StrategyName;
      const snap = this.ctx.model.snap;
      if (!snap || v === snap.split.strategy) return;
      this.ctx.setTail(null);
      post({ type: 'set-strategy', strategy: v });
    });
    this.resetBtn = button('Reset', { secondary: true, title: "Move the handle back to the strategy's choice", cls: 'tl-reset' });
    this.resetBtn.addEventListener('click', () => this.ctx.setTail(null));
    this.compactBtn = button('Compact here', { title: 'Compact everything left of the split point', cls: 'tl-compact' });
    this.compactBtn.addEventListener('click', () => this.compactHere());
    const zoomOut = button('−', { secondary: true, ariaLabel: 'Zoom out', title: 'Zoom out (Ctrl+wheel)', cls: 'tl-zoom' });
    const zoomIn = button('+', { secondary: true, ariaLabel: 'Zoom in', title: 'Zoom in (Ctrl+wheel)', cls: 'tl-zoom' });
    zoomOut.addEventListener('click', () => this.zoomBy(0.5, 0.5));
    zoomIn.addEventListener('click', () => this.zoomBy(2, this.handleFrac()));

    const legend = h(
      'div',
      { class: 'tl-legend', 'aria-hidden': 'true' },
      ...(['user', 'assistant', 'tool', 'summary', 'pinned', 'system'] as const).map((k) => h('span', { class: `lg lg-${k}` }, h('i'), k)),
    );

    this.el = h(
      'section',
      { class: 'timeline', 'aria-label': 'Timeline and split point' },
      h('div', { class: 'tl-toolbar' }, this.strategy, this.resetBtn, this.compactBtn),
      h('div', { class: 'tl-wrap' }, this.surface, this.tip),
      this.scroller,
      h('div', { class: 'tl-foot' }, this.info, h('span', { class: 'spacer' }), h('span', { class: 'tl-zoomer' }, zoomOut, this.zoomLabel, zoomIn)),
      legend,
      this.live,
    );

    this.bindHandle();
    this.bindSurface();
    this.scroller.addEventListener('scroll', () => {
      const max = this.scroller.scrollWidth - this.scroller.clientWidth;
      this.ctx.ui.scrollFrac = max > 0 ? this.scroller.scrollLeft / max : 0;
      this.ctx.save();
      this.positionHandle();
      this.draw();
    });
    new ResizeObserver(() => {
      const w = Math.max(50, Math.round(this.surface.clientWidth));
      if (w !== this.width) {
        this.width = w;
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

  // ── geometry ────────────────────────────────────────────────────────────
  private contentWidth(): number {
    return this.width * this.ctx.ui.zoom;
  }
  private scrollLeft(): number {
    return this.ctx.ui.zoom > 1 ? this.ctx.ui.scrollFrac * (this.contentWidth() - this.width) : 0;
  }
  private xOfOffset(offset: number): number {
    const total = this.ctx.model.prefix.total;
    return total > 0 ? (offset / total) * this.contentWidth() - this.scrollLeft() : 0;
  }
  private offsetOfX(x: number): number {
    const total = this.ctx.model.prefix.total;
    return ((x + this.scrollLeft()) / this.contentWidth()) * total;
  }
  private xOfBoundary(i: number): number {
    const all = this.ctx.model.prefix.all;
    return this.xOfOffset(all[Math.max(0, Math.min(i, all.length - 1))]!);
  }
  private handleFrac(): number {
    return Math.max(0, Math.min(1, this.xOfBoundary(this.ctx.tail()) / this.width));
  }

  private zoomBy(factor: number, anchorFrac: number): void {
    const ui = this.ctx.ui;
    const anchorOffset = this.offsetOfX(anchorFrac * this.width);
    const z = Math.max(1, Math.min(256, ui.zoom * factor));
    if (z === ui.zoom) return;
    ui.zoom = z;
    const total = this.ctx.model.prefix.total;
    const cw = this.contentWidth();
    const left = total > 0 ? (anchorOffset / total) * cw - anchorFrac * this.width : 0;
    ui.scrollFrac = cw > this.width ? Math.max(0, Math.min(1, left / (cw - this.width))) : 0;
    this.ctx.save();
    this.layoutZoom();
    this.drawNow();
    this.positionHandle();
  }

  private layoutZoom(): void {
    const z = this.ctx.ui.zoom;
    setText(this.zoomLabel, `${z < 10 ? z.toFixed(z % 1 ? 1 : 0) : Math.round(z)}×`);
    this.scroller.hidden = z <= 1;
    this.spacer.style.width = `${Math.round(this.contentWidth())}px`;
    if (z > 1) {
      const max = this.contentWidth() - this.width;
      const want = Math.round(this.ctx.ui.scrollFrac * max);
      if (Math.abs(this.scroller.scrollLeft - want) > 1) this.scroller.scrollLeft = want;
    }
  }

  // ── rendering ───────────────────────────────────────────────────────────
  render(): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    const sel = this.strategy as unknown as { value: string };
    if (sel.value !== s.split.strategy) sel.value = s.split.strategy;
    this.width = Math.max(50, Math.round(this.surface.clientWidth || this.width));
    this.layoutZoom();
    this.drawNow();
    this.positionHandle();
  }

  /** Coalesces redraws to one per frame. */
  draw(): void {
    if (this.drawQueued) return;
    this.drawQueued = requestAnimationFrame(() => {
      this.drawQueued = 0;
      this.drawNow();
    });
  }

  private readPalette(): Palette {
    if (this.palette) return this.palette;
    const cs = getComputedStyle(this.el);
    const v = (name: string, fallback: string) => cs.getPropertyValue(name).trim() || fallback;
    this.palette = {
      user: v('--sp-user', '#3794ff'),
      assistant: v('--sp-assistant', '#89d185'),
      tool: v('--sp-tool', '#d18616'),
      system: v('--sp-system', '#888888'),
      summary: v('--sp-summary', '#b180d7'),
      pinned: v('--sp-pinned', '#cca700'),
      bg: v('--sp-bg', '#1e1e1e'),
      sep: v('--sp-sep', '#1e1e1e'),
      focus: v('--sp-focus', '#007fd4'),
      hover: v('--sp-hover', '#ffffff'),
      kept: v('--sp-kept', '#ffffff'),
      allowed: v('--sp-allowed', '#888888'),
      queued: v('--sp-queued', '#888888'),
      streaming: v('--sp-streaming', '#3794ff'),
      done: v('--sp-done', '#89d185'),
      failed: v('--sp-failed', '#f14c4c'),
      edited: v('--sp-edited', '#b180d7'),
    };
    return this.palette;
  }

  private colourOf(m: ViewMessage, p: Palette): string {
    if (m.kind === 'summary') return p.summary;
    if (m.kind === 'pinned' || m.origin === 'pinned') return p.pinned;
    switch (m.role) {
      case 'user':
        return p.user;
      case 'assistant':
        return p.assistant;
      case 'tool':
        return p.tool;
      case 'system':
        return p.system;
    }
  }

  drawNow(): void {
    const s = this.ctx.model.snap;
    const canvas = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = this.width;
    const hgt = SEG_H + BAND_H + 2;
    const bw = Math.round(w * dpr);
    const bh = Math.round(hgt * dpr);
    if (canvas.width !== bw || canvas.height !== bh) {
      canvas.width = bw;
      canvas.height = bh;
    }
    const g = canvas.getContext('2d');
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    const p = this.readPalette();
    g.clearRect(0, 0, w, hgt);
    if (!s || s.messages.length === 0) return;
    const msgs = s.messages;
    const all = this.ctx.model.prefix.all;
    const total = this.ctx.model.prefix.total;
    if (total <= 0) return;
    const scale = this.contentWidth() / total;
    const sl = this.scrollLeft();
    // Visible message range by binary search on the prefix sums.
    const first = Math.max(0, messageAtOffset(this.ctx.model.prefix, sl / scale));
    const lastOffset = (sl + w) / scale;
    let prevColour = '';
    for (let i = first; i < msgs.length; i++) {
      const a = all[i]!;
      if (a > lastOffset) break;
      const x0 = a * scale - sl;
      const x1 = all[i + 1]! * scale - sl;
      const m = msgs[i]!;
      const c = this.colourOf(m, p);
      if (c !== prevColour) {
        g.fillStyle = c;
        prevColour = c;
      }
      const wide = x1 - x0 >= 4;
      g.fillRect(x0, 2, Math.max(x1 - x0 - (wide ? 1 : 0), 0.5), SEG_H - 2);
      if (m.kind === 'summary' && wide) {
        // Summaries carry a top stripe: they stand for archived originals.
        g.fillStyle = p.kept;
        g.globalAlpha = 0.55;
        g.fillRect(x0, 2, x1 - x0 - 1, 3);
        g.globalAlpha = 1;
        prevColour = '';
      }
    }
    // Kept messages (preserve-user-messages) before the tail: a dot above.
    const kept = s.split.keptIndices;
    if (kept.length > 0) {
      g.fillStyle = p.kept;
      for (const k of kept) {
        if (k >= msgs.length) continue;
        const x = (all[k]! + all[k + 1]!) / 2 * scale - sl;
        if (x < -2 || x > w + 2) continue;
        g.fillRect(x - 1, SEG_H - 6, 2, 4);
      }
    }
    // Allowed snap points, when they are far enough apart to read.
    const allowed = s.split.allowed;
    if (allowed.length > 1 && allowed.length < 2000) {
      const spacing = w / allowed.length * this.ctx.ui.zoom;
      if (spacing >= 4) {
        g.fillStyle = p.allowed;
        for (const a of allowed) {
          const x = (all[Math.min(a, all.length - 1)]!) * scale - sl;
          if (x < 0 || x > w) continue;
          g.fillRect(x - 0.5, SEG_H, 1, 2);
        }
      }
    }
    // Hover and selection outlines.
    const outline = (i: number, colour: string) => {
      if (i < 0 || i >= msgs.length) return;
      const x0 = all[i]! * scale - sl;
      const x1 = all[i + 1]! * scale - sl;
      g.strokeStyle = colour;
      g.lineWidth = 1.5;
      g.strokeRect(x0 + 0.75, 1, Math.max(x1 - x0 - 1.5, 2), SEG_H - 0.5);
    };
    if (this.hover >= 0) outline(this.hover, p.hover);
    const selIdx = this.selectedIndex();
    if (selIdx >= 0) outline(selIdx, p.focus);
    // Block band while a compaction is in flight.
    const c = s.compaction;
    if (c && c.blocks.length > 0) {
      const y = SEG_H + 2;
      for (const b of c.blocks) {
        const x0 = all[Math.min(b.firstMessage, all.length - 1)]! * scale - sl;
        const x1 = all[Math.min(b.lastMessage + 1, all.length - 1)]! * scale - sl;
        if (x1 < 0 || x0 > w) continue;
        const bwid = Math.max(x1 - x0 - 1, 1);
        g.fillStyle = p[b.status];
        g.globalAlpha = b.status === 'queued' ? 0.45 : 1;
        if (b.status === 'streaming') {
          g.globalAlpha = 0.35;
          g.fillRect(x0, y, bwid, BAND_H);
          g.globalAlpha = 1;
          const expected = Math.max(1, s.split.summaryTokensPerBlock || b.tokens / 10);
          g.fillRect(x0, y, bwid * Math.min(1, b.streamedTokens / expected), BAND_H);
        } else g.fillRect(x0, y, bwid, BAND_H);
        g.globalAlpha = 1;
        if (this.ctx.ui.selectedBlock === b.index) {
          g.strokeStyle = p.focus;
          g.lineWidth = 1.5;
          g.strokeRect(x0 + 0.75, y + 0.75, Math.max(bwid - 1.5, 1), BAND_H - 1.5);
        }
      }
    }
  }

  private selectedIndex(): number {
    const id = this.ctx.ui.selectedId;
    if (!id) return -1;
    const msgs = this.ctx.model.snap?.messages;
    if (!msgs) return -1;
    // Ids are usually m-<n>; search from the likely spot outward is overkill: a find over 5,000 is ~µs.
    return msgs.findIndex((m) => m.id === id);
  }

  /** Hot path: moves the handle and shade; no canvas redraw. */
  positionHandle(): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    const tail = this.ctx.tail();
    const allowed = s.split.allowed;
    const n = s.messages.length;
    const x = Math.max(-2, Math.min(this.width + 2, this.xOfBoundary(tail)));
    this.handle.style.setProperty('--x', `${x.toFixed(1)}px`);
    this.shade.style.setProperty('--x', `${Math.max(0, x).toFixed(1)}px`);
    this.handle.classList.toggle('offscreen', x < 0 || x > this.width);
    const min = allowed.length ? allowed[0]! : tail;
    const max = allowed.length ? allowed[allowed.length - 1]! : tail;
    setAttr(this.handle, 'aria-valuemin', String(min));
    setAttr(this.handle, 'aria-valuemax', String(max));
    setAttr(this.handle, 'aria-valuenow', String(tail));
    const p = this.ctx.projection();
    const keptTok = this.ctx.model.prefix.total - this.ctx.model.prefix.all[Math.min(tail, n)]!;
    setAttr(
      this.handle,
      'aria-valuetext',
      `Tail starts at message ${tail} of ${n}: ${formatTokens(p.headTokens)} tokens summarized in ${p.blocks} blocks, ${formatTokens(keptTok)} kept verbatim`,
    );
    const dragged = this.ctx.ui.dragTail !== null && this.ctx.ui.dragTail !== s.split.tailStartIndex;
    this.handle.classList.toggle('moved', dragged);
    setDisabled(this.resetBtn, !dragged);
    const busy = !!s.compaction && (s.compaction.state === 'running' || s.compaction.state === 'judging');
    setDisabled(this.compactBtn, p.headTokens <= 0 || busy);
    setAttr(this.handle, 'aria-disabled', allowed.length === 0 ? 'true' : 'false');
    setText(this.info, `${n.toLocaleString('en-US')} msgs · ${formatTokens(this.ctx.model.prefix.total)} tok · split @ ${tail}${dragged ? ' (moved)' : ''}`);
  }

  private compactHere(): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    post({ type: 'compact', focus: null, tailStartIndex: this.ctx.tail() });
  }

  // ── interaction ─────────────────────────────────────────────────────────
  private step(delta: number | 'home' | 'end'): void {
    const s = this.ctx.model.snap;
    if (!s) return;
    const allowed = s.split.allowed;
    if (allowed.length === 0) return;
    const cur = nearestAllowedByIndex(allowed, this.ctx.tail());
    let k: number;
    if (delta === 'home') k = 0;
    else if (delta === 'end') k = allowed.length - 1;
    else {
      // If the current tail is between allowed points, the first step lands on the neighbour in that direction.
      const exact = allowed[cur] === this.ctx.tail();
      k = exact ? cur + delta : delta > 0 ? (allowed[cur]! > this.ctx.tail() ? cur : cur + 1) + (delta - 1) : (allowed[cur]! < this.ctx.tail() ? cur : cur - 1) + (delta + 1);
    }
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

  private ensureHandleVisible(): void {
    if (this.ctx.ui.zoom <= 1) return;
    const x = this.xOfBoundary(this.ctx.tail());
    if (x < 10 || x > this.width - 10) {
      const total = this.ctx.model.prefix.total;
      const cw = this.contentWidth();
      const target = (this.ctx.model.prefix.all[this.ctx.tail()]! / total) * cw - this.width / 2;
      this.ctx.ui.scrollFrac = Math.max(0, Math.min(1, target / (cw - this.width)));
      this.layoutZoom();
      this.drawNow();
      this.positionHandle();
    }
  }

  private bindHandle(): void {
    const hnd = this.handle;
    hnd.addEventListener('keydown', (e) => {
      let handled = true;
      switch (e.key) {
        case 'ArrowLeft':
        case 'ArrowDown':
          this.step(-1);
          break;
        case 'ArrowRight':
        case 'ArrowUp':
          this.step(1);
          break;
        case 'PageDown':
          this.step(-10);
          break;
        case 'PageUp':
          this.step(10);
          break;
        case 'Home':
          this.step('home');
          break;
        case 'End':
          this.step('end');
          break;
        case 'Escape':
          this.ctx.setTail(null);
          break;
        default:
          handled = false;
      }
      if (handled) {
        e.preventDefault();
        e.stopPropagation();
      }
    });
    hnd.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      e.preventDefault();
      hnd.focus();
      hnd.setPointerCapture(e.pointerId);
      this.dragging = true;
      this.dragStartTail = this.ctx.ui.dragTail;
      hnd.classList.add('dragging');
    });
    hnd.addEventListener('pointermove', (e) => {
      if (!this.dragging) return;
      this.dragTo(e.clientX);
    });
    const end = (e: PointerEvent) => {
      if (!this.dragging) return;
      this.dragging = false;
      hnd.classList.remove('dragging');
      if (hnd.hasPointerCapture(e.pointerId)) hnd.releasePointerCapture(e.pointerId);
      this.ctx.save(true);
      this.announce(`Split point at message ${this.ctx.tail()}`);
    };
    hnd.addEventListener('pointerup', end);
    hnd.addEventListener('pointercancel', (e) => {
      if (this.dragging) this.ctx.setTail(this.dragStartTail);
      end(e);
    });
    hnd.addEventListener('lostpointercapture', (e) => end(e));
  }

  private dragTo(clientX: number): void {
    const s = this.ctx.model.snap;
    if (!s || s.split.allowed.length === 0) return;
    const rect = this.surface.getBoundingClientRect();
    const x = clientX - rect.left;
    const k = nearestAllowedByOffset(s.split.allowed, this.ctx.model.prefix, this.offsetOfX(x));
    if (k >= 0) this.moveTo(s.split.allowed[k]!);
  }

  private bindSurface(): void {
    const sf = this.surface;
    sf.addEventListener('pointermove', (e) => {
      if (this.dragging || e.target === this.handle || this.handle.contains(e.target as Node)) {
        this.hideTip();
        return;
      }
      const rect = sf.getBoundingClientRect();
      const x = e.clientX - rect.left;
      const y = e.clientY - rect.top;
      const s = this.ctx.model.snap;
      if (!s) return;
      if (y > SEG_H + 1 && s.compaction && s.compaction.blocks.length) {
        const b = this.blockAt(x);
        if (b >= 0) {
          const blk = s.compaction.blocks.find((bb) => bb.index === b)!;
          this.showTip(x, `Block ${blk.index + 1} · ${blk.status}${blk.status === 'streaming' ? ` (${blk.streamedTokens} tok so far)` : ''}`, `messages ${blk.firstMessage}–${blk.lastMessage} · ${formatTokens(blk.tokens)} tok in${blk.stats ? ` → ${formatTokens(blk.stats.outputTokens)} out` : ''}`);
          return;
        }
      }
      const i = messageAtOffset(this.ctx.model.prefix, this.offsetOfX(x));
      if (i !== this.hover) {
        this.hover = i;
        this.draw();
      }
      const m = s.messages[i];
      if (!m) return this.hideTip();
      this.showTip(x, describe(m), preview(m));
    });
    sf.addEventListener('pointerleave', () => {
      this.hideTip();
      if (this.hover !== -1) {
        this.hover = -1;
        this.draw();
      }
    });
    sf.addEventListener('pointerdown', (e) => {
      if (e.target !== this.canvas && e.target !== this.shade) return;
      const rect = sf.getBoundingClientRect();
      const x = e.clientX - rect.left;
      const y = e.clientY - rect.top;
      const s = this.ctx.model.snap;
      if (!s) return;
      if (y > SEG_H + 1 && s.compaction) {
        const b = this.blockAt(x);
        if (b >= 0) {
          this.ctx.selectBlock(b);
          return;
        }
      }
      const i = messageAtOffset(this.ctx.model.prefix, this.offsetOfX(x));
      if (i >= 0) this.ctx.selectMessage(i, { reveal: true });
    });
    sf.addEventListener('dblclick', (e) => {
      const rect = sf.getBoundingClientRect();
      const i = messageAtOffset(this.ctx.model.prefix, this.offsetOfX(e.clientX - rect.left));
      const m = this.ctx.model.snap?.messages[i];
      if (m && m.kind === 'summary') this.ctx.expandSummary(m.id);
    });
    sf.addEventListener('wheel', (e) => {
      if (e.ctrlKey || e.metaKey) {
        e.preventDefault();
        const rect = sf.getBoundingClientRect();
        this.zoomBy(e.deltaY < 0 ? 1.25 : 0.8, (e.clientX - rect.left) / this.width);
      } else if (this.ctx.ui.zoom > 1 && (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY))) {
        e.preventDefault();
        this.scroller.scrollLeft += e.shiftKey ? e.deltaY : e.deltaX;
      }
    }, { passive: false });
    sf.addEventListener('keydown', (e) => {
      if (e.target !== sf) return;
      const s = this.ctx.model.snap;
      if (!s || s.messages.length === 0) return;
      let i = this.selectedIndex();
      let handled = true;
      switch (e.key) {
        case 'ArrowLeft':
          i = i < 0 ? s.messages.length - 1 : Math.max(0, i - 1);
          this.ctx.selectMessage(i);
          break;
        case 'ArrowRight':
          i = i < 0 ? 0 : Math.min(s.messages.length - 1, i + 1);
          this.ctx.selectMessage(i);
          break;
        case 'Home':
          this.ctx.selectMessage(0);
          break;
        case 'End':
          this.ctx.selectMessage(s.messages.length - 1);
          break;
        case 'Enter':
          if (i >= 0) this.ctx.selectMessage(i, { reveal: true, focusChat: true });
          break;
        case 'e':
        case 'E':
          if (i >= 0 && s.messages[i]!.kind === 'summary') this.ctx.expandSummary(s.messages[i]!.id);
          break;
        case '+':
        case '=':
          this.zoomBy(2, this.handleFrac());
          break;
        case '-':
          this.zoomBy(0.5, 0.5);
          break;
        default:
          handled = false;
      }
      if (handled) e.preventDefault();
    });
  }

  private blockAt(x: number): number {
    const c = this.ctx.model.snap?.compaction;
    if (!c) return -1;
    const off = this.offsetOfX(x);
    const all = this.ctx.model.prefix.all;
    for (const b of c.blocks) {
      if (off >= all[Math.min(b.firstMessage, all.length - 1)]! && off < all[Math.min(b.lastMessage + 1, all.length - 1)]!) return b.index;
    }
    return -1;
  }

  private showTip(x: number, title: string, body: string): void {
    const tip = this.tip;
    clear(tip);
    tip.append(h('strong', { text: title }), h('span', { text: body }));
    tip.hidden = false;
    const left = Math.max(0, Math.min(this.width - 220, x - 110));
    tip.style.setProperty('--x', `${left}px`);
  }

  private hideTip(): void {
    if (!this.tip.hidden) this.tip.hidden = true;
  }

  /** Selection changed elsewhere: redraw outline, scroll it into view when zoomed, announce it. */
  onSelection(index: number): void {
    const m = this.ctx.model.snap?.messages[index];
    if (m) {
      this.announce(`${describe(m)}. ${preview(m)}`);
      if (this.ctx.ui.zoom > 1) {
        const x = this.xOfBoundary(index);
        if (x < 0 || x > this.width) {
          const cw = this.contentWidth();
          const target = (this.ctx.model.prefix.all[index]! / this.ctx.model.prefix.total) * cw - this.width / 2;
          this.ctx.ui.scrollFrac = Math.max(0, Math.min(1, target / (cw - this.width)));
          this.layoutZoom();
          this.positionHandle();
        }
      }
    }
    this.draw();
  }

  private announce(text: string): void {
    setText(this.live, text);
  }
}

export function describe(m: ViewMessage): string {
  const kind = m.kind === 'summary' ? `summary${m.archivedCount ? ` of ${m.archivedCount} messages` : ''}` : m.kind === 'pinned' ? 'pinned' : m.role;
  return `#${m.index} ${kind} · ${formatTokens(m.tokens)} tokens${m.origin === 'kept' ? ' · kept' : ''}`;
}

export function preview(m: ViewMessage): string {
  let t = m.content;
  if (!t && m.toolCalls && m.toolCalls.length) t = m.toolCalls.map((c) => `${c.name}(${c.arguments})`).join(', ');
  t = t.replace(/\s+/g, ' ').trim();
  return t.length > 160 ? `${t.slice(0, 157)}…` : t || '(empty)';
}
