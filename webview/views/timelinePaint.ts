import { compactionOpen, indicesHold, type BlockStatus, type Role, type ViewMessage } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { messageAtOffset } from '../projection';
import type { TimelineGeometry } from './timelineGeometry';

export const SEG_H = 26;
export const BAND_H = 8;

/** Colours from the theme's CSS variables, read once per theme. */
export type Palette = Record<Role | 'summary' | 'pinned', string> &
  Record<'bg' | 'sep' | 'focus' | 'hover' | 'kept' | 'allowed', string> &
  Record<BlockStatus, string>;

const DEFAULTS: Palette = {
  user: '#3794ff',
  assistant: '#89d185',
  tool: '#d18616',
  system: '#888888',
  summary: '#b180d7',
  pinned: '#cca700',
  bg: '#1e1e1e',
  sep: '#1e1e1e',
  focus: '#007fd4',
  hover: '#ffffff',
  kept: '#ffffff',
  allowed: '#888888',
  queued: '#888888',
  streaming: '#3794ff',
  done: '#89d185',
  failed: '#f14c4c',
  edited: '#b180d7',
};

export function readPalette(el: Element): Palette {
  const cs = getComputedStyle(el);
  const p = { ...DEFAULTS };
  for (const k of Object.keys(DEFAULTS) as (keyof Palette)[]) p[k] = cs.getPropertyValue(`--sp-${k}`).trim() || DEFAULTS[k];
  return p;
}

function colourOf(m: ViewMessage, p: Palette): string {
  if (m.kind === 'summary') return p.summary;
  if (m.kind === 'pinned' || m.origin === 'pinned') return p.pinned;
  return p[m.role];
}

export interface PaintState {
  palette: Palette;
  /** Message under the pointer, or -1. */
  hover: number;
  /** Selected message, or -1. */
  selected: number;
}

/** Paints segments, kept dots, snap ticks, outlines and the block band: one pass over the visible range. */
export function paintTimeline(canvas: HTMLCanvasElement, ctx: Ctx, geo: TimelineGeometry, st: PaintState): void {
  const s = ctx.model.snap;
  const dpr = window.devicePixelRatio || 1;
  const w = geo.width;
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
  const p = st.palette;
  g.clearRect(0, 0, w, hgt);
  if (!s || s.messages.length === 0) return;
  const msgs = s.messages;
  const all = ctx.model.prefix.all;
  const total = ctx.model.prefix.total;
  if (total <= 0) return;
  const scale = geo.contentWidth() / total;
  const sl = geo.scrollLeft();
  const xAt = (i: number) => all[Math.min(i, all.length - 1)]! * scale - sl;
  // Visible message range by binary search on the prefix sums.
  const first = Math.max(0, messageAtOffset(ctx.model.prefix, sl / scale));
  const lastOffset = (sl + w) / scale;
  let prevColour = '';
  for (let i = first; i < msgs.length; i++) {
    const a = all[i]!;
    if (a > lastOffset) break;
    const x0 = a * scale - sl;
    const x1 = all[i + 1]! * scale - sl;
    const m = msgs[i]!;
    const c = colourOf(m, p);
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
      const x = ((all[k]! + all[k + 1]!) / 2) * scale - sl;
      if (x < -2 || x > w + 2) continue;
      g.fillRect(x - 1, SEG_H - 6, 2, 4);
    }
  }
  // Allowed snap points, when they are far enough apart to read.
  const allowed = s.split.allowed;
  if (allowed.length > 1 && allowed.length < 2000 && (w / allowed.length) * ctx.ui.zoom >= 4) {
    g.fillStyle = p.allowed;
    for (const a of allowed) {
      const x = xAt(a);
      if (x < 0 || x > w) continue;
      g.fillRect(x - 0.5, SEG_H, 1, 2);
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
  if (st.hover >= 0) outline(st.hover, p.hover);
  if (st.selected >= 0) outline(st.selected, p.focus);
  // Block band while a compaction is open; not once the context changed under it (adopted, or a first pin), nor once
  // it is closed (cancelled, failed, dismissed).
  const c = s.compaction;
  if (!c || c.blocks.length === 0 || !compactionOpen(c) || !indicesHold(c, s.split)) return;
  const y = SEG_H + 2;
  for (const b of c.blocks) {
    const x0 = xAt(b.firstMessage);
    const x1 = xAt(b.lastMessage + 1);
    if (x1 < 0 || x0 > w) continue;
    const bwid = Math.max(x1 - x0 - 1, 1);
    g.fillStyle = p[b.status];
    g.globalAlpha = b.status === 'queued' ? 0.45 : 1;
    if (b.status === 'streaming') {
      g.globalAlpha = 0.35;
      g.fillRect(x0, y, bwid, BAND_H);
      g.globalAlpha = 1;
      const expected = Math.max(1, b.tokens / (s.split.compression || 10));
      g.fillRect(x0, y, bwid * Math.min(1, b.streamedTokens / expected), BAND_H);
    } else g.fillRect(x0, y, bwid, BAND_H);
    g.globalAlpha = 1;
    if (ctx.ui.selectedBlock === b.index) {
      g.strokeStyle = p.focus;
      g.lineWidth = 1.5;
      g.strokeRect(x0 + 0.75, y + 0.75, Math.max(bwid - 1.5, 1), BAND_H - 1.5);
    }
  }
}
