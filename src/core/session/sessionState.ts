import type { ChatMessage, StoredMessage } from '../messages';
import { capTurnToBudget } from '../pretrim';
import { leadingSystemCount } from '../turns';
import { countMessageWith } from '../tokens/tokenCounter';
import type { CompactionRecord, PinItem, SessionEvent } from './schema';
import { SessionStateError } from './errors';
import type { Origin } from '../vocabulary';

/**
 * The session as the event log describes it: every original message ever
 * appended, every compaction with whether it is still in force, the pins and
 * the standing focus. Pure; the store feeds it events.
 */
export interface SessionState {
  id: string;
  createdAt: number;
  title: string | undefined;
  /** All original messages, oldest first. Never shrinks. */
  messages: StoredMessage[];
  /** Adopted compactions still in force, oldest first; undo pops the last. */
  compactions: CompactionRecord[];
  /** Compactions that were undone, kept for the record and for redo/inspection. */
  undone: CompactionRecord[];
  pins: PinItem[];
  focus: string | null;
}

export function emptyState(id: string, createdAt: number, title?: string): SessionState {
  return { id, createdAt, title, messages: [], compactions: [], undone: [], pins: [], focus: null };
}

/**
 * Throws SessionStateError when the event contradicts the state. Called before
 * an event is written, so a bad event never reaches the log.
 */
export function checkEvent(state: SessionState, e: SessionEvent, index: Map<string, number>): void {
  switch (e.type) {
    case 'session':
      throw new SessionStateError('a second session header');
    case 'message':
      if (index.has(e.message.id)) throw new SessionStateError(`message id ${e.message.id} appears twice`);
      return;
    case 'compaction': {
      const c = e.compaction;
      if (c.tailStartId !== null && !index.has(c.tailStartId)) throw new SessionStateError(`compaction ${c.id} points at unknown message ${c.tailStartId}`);
      for (const k of c.keptIds) if (!index.has(k)) throw new SessionStateError(`compaction ${c.id} keeps unknown message ${k}`);
      if (state.compactions.some((x) => x.id === c.id) || state.undone.some((x) => x.id === c.id)) {
        throw new SessionStateError(`compaction id ${c.id} appears twice`);
      }
      return;
    }
    case 'undo': {
      const top = state.compactions[state.compactions.length - 1];
      if (!top || top.id !== e.compactionId) {
        throw new SessionStateError(`undo of ${e.compactionId}, but the compaction in force is ${top ? top.id : 'none'}`);
      }
      return;
    }
    case 'pins':
    case 'focus':
      return;
  }
}

/** Applies one event; the caller has run checkEvent on it first. */
export function applyEvent(state: SessionState, e: SessionEvent, index: Map<string, number>): void {
  switch (e.type) {
    case 'session':
      return;
    case 'message':
      index.set(e.message.id, state.messages.length);
      state.messages.push(e.message);
      return;
    case 'compaction':
      state.compactions.push(e.compaction);
      return;
    case 'undo':
      state.undone.push(state.compactions.pop()!);
      return;
    case 'pins':
      state.pins = e.pins;
      return;
    case 'focus':
      state.focus = e.focus;
      return;
  }
}

export const PINNED_MESSAGE_ID = 'pinned-block';

/** The pinned block as one message. Compaction re-inserts it verbatim; it is never summarised. */
export function renderPinned(pins: readonly PinItem[], timestamp: number): StoredMessage | undefined {
  if (pins.length === 0) return undefined;
  const section = (kind: PinItem['kind'], title: string): string[] => {
    const items = pins.filter((p) => p.kind === kind);
    return items.length === 0 ? [] : [title, ...items.map((p) => `- ${p.text}`)];
  };
  const content = [
    'PINNED (hard constraints and open loops; they hold for the whole session):',
    ...section('constraint', 'Constraints:'),
    ...section('open-loop', 'Open loops:'),
    ...section('note', 'Notes:'),
  ].join('\n');
  return { role: 'user', content, id: PINNED_MESSAGE_ID, timestamp, kind: 'pinned' };
}

/** Where each message of the active context came from. */
export type ActiveOrigin = Origin;

export interface ActiveContext {
  messages: StoredMessage[];
  origins: ActiveOrigin[];
  /** The compaction in force, if any. */
  compaction: CompactionRecord | undefined;
}

/**
 * Splices the context the agent sends: [system, pinned, kept…, summary, …tail].
 * Only the compaction in force matters: a re-compaction's summary already
 * covers the earlier summary.
 */
export function activeContext(state: SessionState, index?: Map<string, number>): ActiveContext {
  const idx = index ?? buildIndex(state.messages);
  const out: StoredMessage[] = [];
  const origins: ActiveOrigin[] = [];
  const push = (m: StoredMessage, o: ActiveOrigin): void => {
    out.push(m);
    origins.push(o);
  };
  let i = leadingSystemCount(state.messages);
  for (let j = 0; j < i; j++) push(state.messages[j]!, 'system');
  const pinned = renderPinned(state.pins, state.createdAt);
  if (pinned) push(pinned, 'pinned');
  const c = state.compactions[state.compactions.length - 1];
  if (!c) {
    for (; i < state.messages.length; i++) push(state.messages[i]!, 'tail');
    return { messages: out, origins, compaction: undefined };
  }
  for (const id of c.keptIds) push(state.messages[idx.get(id)!]!, 'kept');
  push(c.summary, 'summary');
  let from: number;
  if (c.tailStartId !== null) from = idx.get(c.tailStartId)!;
  else if (c.lastSnapshotId !== null && idx.has(c.lastSnapshotId)) from = idx.get(c.lastSnapshotId)! + 1;
  else from = state.messages.length;
  const tail = state.messages.slice(Math.max(from, i));
  const preservedEnd = c.lastSnapshotId !== null && idx.has(c.lastSnapshotId) ? idx.get(c.lastSnapshotId)! + 1 - Math.max(from, i) : 0;
  for (const m of c.turnBudget ? capPreservedTurns(tail, preservedEnd, c.turnBudget) : tail) push(m, 'tail');
  return { messages: out, origins, compaction: c };
}

const CAPPED_SUFFIX = '~capped';

/** The stored message a (possibly capped) active-context message stands for. */
export function originalId(id: string): string {
  return id.endsWith(CAPPED_SUFFIX) ? id.slice(0, -CAPPED_SUFFIX.length) : id;
}

/** Local estimate used when a message has no cached count. */
function estimate(m: ChatMessage): number {
  const own = (m as Partial<StoredMessage>).tokens;
  return own ?? countMessageWith({ countText: (t) => Math.ceil(t.length / 4) }, m);
}

/**
 * The recent-turns strategy holds each preserved turn (the ones in the tail
 * at snapshot time) to the per-turn budget by cutting its largest tool
 * outputs. The cut copies get their own ids, so token caches never confuse
 * them with the archived originals, which stay whole for recall.
 */
function capPreservedTurns(tail: readonly StoredMessage[], preservedEnd: number, budget: number): StoredMessage[] {
  const out: StoredMessage[] = [];
  let k = 0;
  while (k < tail.length) {
    let end = k + 1;
    while (end < tail.length && tail[end]!.role !== 'user') end++;
    const turn = tail.slice(k, end);
    if (k < preservedEnd && turn.reduce((s, m) => s + estimate(m), 0) > budget) {
      const capped = capTurnToBudget(turn, budget, estimate);
      const cut = new Set(capped.cutIds);
      for (const m of capped.messages) {
        if (!cut.has(m.id)) out.push(m);
        else {
          const copy = { ...m, id: `${m.id}${CAPPED_SUFFIX}` } as StoredMessage;
          delete copy.tokens;
          out.push(copy);
        }
      }
    } else out.push(...turn);
    k = end;
  }
  return out;
}

export function buildIndex(messages: readonly StoredMessage[]): Map<string, number> {
  const m = new Map<string, number>();
  messages.forEach((x, i) => m.set(x.id, i));
  return m;
}

/**
 * Original messages no longer in the active context: what `recall` searches.
 * Includes the originals behind every layer, since summaries of summaries keep
 * pointing at the same originals.
 */
export function archivedMessages(state: SessionState, context: ActiveContext = activeContext(state)): StoredMessage[] {
  const active = new Set(context.messages.map((m) => m.id));
  return state.messages.filter((m) => !active.has(m.id));
}
