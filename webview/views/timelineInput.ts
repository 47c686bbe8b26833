import { formatTokens, indicesHold, summaryTokens } from '../../src/protocol/messages';
import type { Ctx } from '../ctx';
import { messageAtOffset } from '../projection';
import type { TimelineGeometry } from './timelineGeometry';
import { SEG_H } from './timelinePaint';
import { describe, preview } from './timelineText';
import type { Tooltip } from './timelineText';

/** What the pointer and keyboard bindings drive; the Timeline provides it. */
export interface TimelineInputTarget {
  readonly ctx: Ctx;
  readonly geo: TimelineGeometry;
  readonly handle: HTMLElement;
  readonly surface: HTMLElement;
  readonly canvas: HTMLElement;
  readonly shade: HTMLElement;
  readonly scroller: HTMLElement;
  readonly tip: Tooltip;
  step(delta: number | 'home' | 'end'): void;
  /** Snaps the handle to the allowed boundary nearest the pointer. */
  dragTo(clientX: number): void;
  zoomBy(factor: number, anchorFrac: number): void;
  setHover(index: number): void;
  selectedIndex(): number;
  announce(text: string): void;
}

const HANDLE_KEYS: Record<string, number | 'home' | 'end' | 'reset'> = {
  ArrowLeft: -1,
  ArrowDown: -1,
  ArrowRight: 1,
  ArrowUp: 1,
  PageDown: -10,
  PageUp: 10,
  Home: 'home',
  End: 'end',
  Escape: 'reset',
};

/** The split handle: a keyboard-operable slider that can also be dragged. */
export function bindHandle(t: TimelineInputTarget): void {
  const hnd = t.handle;
  let dragging = false;
  let dragStartTail: number | null = null;
  hnd.addEventListener('keydown', (e) => {
    const action = HANDLE_KEYS[e.key];
    if (action === undefined) return;
    if (action === 'reset') t.ctx.setTail(null);
    else t.step(action);
    e.preventDefault();
    e.stopPropagation();
  });
  hnd.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    e.preventDefault();
    hnd.focus();
    hnd.setPointerCapture(e.pointerId);
    dragging = true;
    dragStartTail = t.ctx.ui.dragTail;
    hnd.classList.add('dragging');
  });
  hnd.addEventListener('pointermove', (e) => {
    if (dragging) t.dragTo(e.clientX);
  });
  const end = (e: PointerEvent) => {
    if (!dragging) return;
    dragging = false;
    hnd.classList.remove('dragging');
    if (hnd.hasPointerCapture(e.pointerId)) hnd.releasePointerCapture(e.pointerId);
    t.ctx.save(true);
    t.announce(`Split point at message ${t.ctx.tail()}`);
  };
  hnd.addEventListener('pointerup', end);
  hnd.addEventListener('pointercancel', (e) => {
    if (dragging) t.ctx.setTail(dragStartTail);
    end(e);
  });
  hnd.addEventListener('lostpointercapture', (e) => end(e));
}

/** The segments: hover tooltips, click to select, double-click or E to expand, zoom and pan, arrow keys. */
export function bindSurface(t: TimelineInputTarget): void {
  const sf = t.surface;
  const local = (e: MouseEvent) => {
    const rect = sf.getBoundingClientRect();
    return { x: e.clientX - rect.left, y: e.clientY - rect.top };
  };
  sf.addEventListener('pointermove', (e) => {
    if (t.handle.classList.contains('dragging') || e.target === t.handle || t.handle.contains(e.target as Node)) return t.tip.hide();
    const { x, y } = local(e);
    const s = t.ctx.model.snap;
    if (!s) return;
    if (y > SEG_H + 1 && s.compaction && s.compaction.blocks.length && indicesHold(s.compaction, s.split)) {
      const b = t.geo.blockAt(x);
      if (b >= 0) {
        const blk = s.compaction.blocks.find((bb) => bb.index === b)!;
        const title = `Block ${blk.index + 1} · ${blk.status}${blk.status === 'streaming' ? ` (${blk.streamedTokens} tok so far)` : ''}`;
        // The summary as it stands: an edited block's is the user's text (≈ chars/4), not what its worker wrote.
        const st = summaryTokens(blk);
        const out = st && st.n > 0 ? ` → ${st.estimate ? '≈' : ''}${formatTokens(st.n)} out` : '';
        t.tip.show(x, t.geo.width, title, `messages ${blk.firstMessage}–${blk.lastMessage} · ${formatTokens(blk.tokens)} tok in${out}`);
        return;
      }
    }
    const i = messageAtOffset(t.ctx.model.prefix, t.geo.offsetOfX(x));
    t.setHover(i);
    const m = s.messages[i];
    if (!m) return t.tip.hide();
    t.tip.show(x, t.geo.width, describe(m), preview(m));
  });
  sf.addEventListener('pointerleave', () => {
    t.tip.hide();
    t.setHover(-1);
  });
  sf.addEventListener('pointerdown', (e) => {
    if (e.target !== t.canvas && e.target !== t.shade) return;
    const { x, y } = local(e);
    const s = t.ctx.model.snap;
    if (!s) return;
    if (y > SEG_H + 1 && s.compaction) {
      const b = t.geo.blockAt(x);
      if (b >= 0) return t.ctx.selectBlock(b);
    }
    const i = messageAtOffset(t.ctx.model.prefix, t.geo.offsetOfX(x));
    if (i >= 0) t.ctx.selectMessage(i, { reveal: true });
  });
  sf.addEventListener('dblclick', (e) => {
    const i = messageAtOffset(t.ctx.model.prefix, t.geo.offsetOfX(local(e).x));
    const m = t.ctx.model.snap?.messages[i];
    if (m && m.kind === 'summary') t.ctx.expandSummary(m.id);
  });
  sf.addEventListener(
    'wheel',
    (e) => {
      if (e.ctrlKey || e.metaKey) {
        e.preventDefault();
        t.zoomBy(e.deltaY < 0 ? 1.25 : 0.8, local(e).x / t.geo.width);
      } else if (t.ctx.ui.zoom > 1 && (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY))) {
        e.preventDefault();
        t.scroller.scrollLeft += e.shiftKey ? e.deltaY : e.deltaX;
      }
    },
    { passive: false },
  );
  sf.addEventListener('keydown', (e) => {
    if (e.target !== sf) return;
    const s = t.ctx.model.snap;
    if (!s || s.messages.length === 0) return;
    if (surfaceKey(t, e.key, s.messages.length)) e.preventDefault();
  });
}

/** One key on the focused timeline; false when the key is not the timeline's. */
function surfaceKey(t: TimelineInputTarget, key: string, n: number): boolean {
  const i = t.selectedIndex();
  const messages = t.ctx.model.snap!.messages;
  switch (key) {
    case 'ArrowLeft':
      t.ctx.selectMessage(i < 0 ? n - 1 : Math.max(0, i - 1));
      return true;
    case 'ArrowRight':
      t.ctx.selectMessage(i < 0 ? 0 : Math.min(n - 1, i + 1));
      return true;
    case 'Home':
      t.ctx.selectMessage(0);
      return true;
    case 'End':
      t.ctx.selectMessage(n - 1);
      return true;
    case 'Enter':
      if (i >= 0) t.ctx.selectMessage(i, { reveal: true, focusChat: true });
      return true;
    case 'e':
    case 'E':
      if (i >= 0 && messages[i]!.kind === 'summary') t.ctx.expandSummary(messages[i]!.id);
      return true;
    case '+':
    case '=':
      t.zoomBy(2, t.geo.handleFrac());
      return true;
    case '-':
      t.zoomBy(0.5, 0.5);
      return true;
    default:
      return false;
  }
}

/** For screen readers: the message just selected. */
export function announceMessage(t: Pick<TimelineInputTarget, 'ctx' | 'announce'>, index: number): void {
  const m = t.ctx.model.snap?.messages[index];
  if (m) t.announce(`${describe(m)}. ${preview(m)}`);
}
