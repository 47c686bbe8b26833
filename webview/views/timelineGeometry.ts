import { compactionOpen } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';

/**
 * Token offsets ↔ pixels on the timeline. Zoom and pan are a virtual strip
 * `width × zoom` wide, scrolled by `ui.scrollFrac`; only the visible part is drawn.
 */
export class TimelineGeometry {
  /** The visible width in CSS pixels. */
  width = 300;

  constructor(private readonly ctx: Ctx) {}

  contentWidth(): number {
    return this.width * this.ctx.ui.zoom;
  }

  scrollLeft(): number {
    return this.ctx.ui.zoom > 1 ? this.ctx.ui.scrollFrac * (this.contentWidth() - this.width) : 0;
  }

  xOfOffset(offset: number): number {
    const total = this.ctx.model.prefix.total;
    return total > 0 ? (offset / total) * this.contentWidth() - this.scrollLeft() : 0;
  }

  offsetOfX(x: number): number {
    const total = this.ctx.model.prefix.total;
    return ((x + this.scrollLeft()) / this.contentWidth()) * total;
  }

  /** x of the boundary before message `i`. */
  xOfBoundary(i: number): number {
    const all = this.ctx.model.prefix.all;
    return this.xOfOffset(all[Math.max(0, Math.min(i, all.length - 1))]!);
  }

  /** The handle's position as a fraction of the visible width. */
  handleFrac(): number {
    return Math.max(0, Math.min(1, this.xOfBoundary(this.ctx.tail()) / this.width));
  }

  /** The compaction block under x, or -1. */
  blockAt(x: number): number {
    const c = this.ctx.model.snap?.compaction;
    // A closed compaction's blocks are no longer drawn: nothing to hover or select.
    if (!c || !compactionOpen(c)) return -1;
    const off = this.offsetOfX(x);
    const all = this.ctx.model.prefix.all;
    const at = (i: number) => all[Math.min(i, all.length - 1)]!;
    for (const b of c.blocks) {
      if (off >= at(b.firstMessage) && off < at(b.lastMessage + 1)) return b.index;
    }
    return -1;
  }

  /** The scroll fraction that puts the boundary before message `index` in the middle. */
  scrollFracCentring(index: number): number {
    const cw = this.contentWidth();
    const target = (this.ctx.model.prefix.all[index]! / this.ctx.model.prefix.total) * cw - this.width / 2;
    return Math.max(0, Math.min(1, target / (cw - this.width)));
  }

  /** Zooms by `factor` keeping the token under `anchorFrac` of the width in place; false when the zoom is at its limit. */
  zoomBy(factor: number, anchorFrac: number): boolean {
    const ui = this.ctx.ui;
    const anchorOffset = this.offsetOfX(anchorFrac * this.width);
    const z = Math.max(1, Math.min(256, ui.zoom * factor));
    if (z === ui.zoom) return false;
    ui.zoom = z;
    const total = this.ctx.model.prefix.total;
    const cw = this.contentWidth();
    const left = total > 0 ? (anchorOffset / total) * cw - anchorFrac * this.width : 0;
    ui.scrollFrac = cw > this.width ? Math.max(0, Math.min(1, left / (cw - this.width))) : 0;
    return true;
  }
}
