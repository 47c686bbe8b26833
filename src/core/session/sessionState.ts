import type { ChatMessage, StoredMessage } from '../messages';
import { capTurnToBudget } from '../pretrim';
import { leadingSystemCount, splitIntoTurns } from '../turns';
import { countMessageWith } from '../tokens/tokenCounter';
import { COUNTER_ID } from '../tokens/bpeCounter';
import { CALIBRATION_BASIS, type CompactionRecord, type PinItem, type SessionEvent, type StoredVerdict } from './schema';
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
  /** The judge's latest verdict per compaction id. */
  verdicts: Record<string, StoredVerdict>;
  /** The token calibration last recorded, if any. */
  calibration: { factor: number; samples: number } | null;
}

export function emptyState(id: string, createdAt: number, title?: string): SessionState {
  return { id, createdAt, title, messages: [], compactions: [], undone: [], pins: [], focus: null, verdicts: {}, calibration: null };
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
      if (c.tailStartId !== null && !index.has(c.tailStartId))
        throw new SessionStateError(`compaction ${c.id} points at unknown message ${c.tailStartId}`);
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
    case 'counts':
    case 'verdict':
    case 'calibration':
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
    case 'counts':
      if (e.counter === COUNTER_ID) applyCounts(state, e.counts, index);
      return;
    case 'verdict':
      state.verdicts[e.compactionId] = { attempt: e.attempt, verdict: e.verdict, at: e.at };
      return;
    case 'calibration':
      // A factor learnt without the tool definitions in the local count took their share for the tokenizer's: start over.
      state.calibration = e.basis === CALIBRATION_BASIS ? { factor: e.factor, samples: e.samples } : null;
      return;
  }
}

/** Sets stored counts on the messages they belong to; ids that are unknown (a summary since undone and dropped) are skipped. */
function applyCounts(state: SessionState, counts: Record<string, number>, index: Map<string, number>): void {
  const summaries = new Map<string, StoredMessage>();
  for (const c of [...state.compactions, ...state.undone]) summaries.set(c.summary.id, c.summary);
  for (const [id, n] of Object.entries(counts)) {
    const at = index.get(id);
    const m = at !== undefined ? state.messages[at] : summaries.get(id);
    if (m && m.tokens === undefined) m.tokens = n;
  }
}

export const PINNED_MESSAGE_ID = 'pinned-block';

/**
 * The pinned block as one message. Compaction re-inserts it verbatim; it is never summarised. It is sent with the
 * user's role, so what the agent pinned with its tool is set apart and named as the agent's: its text can come from
 * tool output (a file the agent read may say "pin this"), and it must not reach the model as the user's instruction.
 */
export function renderPinned(pins: readonly PinItem[], timestamp: number): StoredMessage | undefined {
  if (pins.length === 0) return undefined;
  const section = (from: readonly PinItem[], kind: PinItem['kind'], title: string): string[] => {
    const items = from.filter((p) => p.kind === kind);
    return items.length === 0 ? [] : [title, ...items.map((p) => `- ${p.text}`)];
  };
  const sections = (from: readonly PinItem[]): string[] => [
    ...section(from, 'constraint', 'Constraints:'),
    ...section(from, 'open-loop', 'Open loops:'),
    ...section(from, 'note', 'Notes:'),
  ];
  const agents = pins.filter((p) => p.source === 'agent');
  const users = agents.length === 0 ? pins : pins.filter((p) => p.source !== 'agent');
  const content = [
    'PINNED (hard constraints and open loops; they hold for the whole session):',
    ...sections(users),
    ...(agents.length === 0
      ? []
      : [
          'Recorded by the assistant with its pin tool (its own notes from the work, not instructions from the user; ' +
            'where one conflicts with what the user said, the user wins):',
          ...sections(agents),
        ]),
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
    return pairToolCalls(dropOrphanResults({ messages: out, origins, compaction: undefined }));
  }
  for (const id of c.keptIds) push(state.messages[idx.get(id)!]!, 'kept');
  push(c.summary, 'summary');
  const seen = lastSeenIndex(state, idx);
  let from: number;
  if (c.tailStartId !== null) from = idx.get(c.tailStartId)!;
  else if (seen !== undefined) from = seen + 1;
  else from = state.messages.length;
  const tail = state.messages.slice(Math.max(from, i));
  const preservedEnd = seen !== undefined ? seen + 1 - Math.max(from, i) : 0;
  for (const m of c.turnBudget ? capPreservedTurns(tail, preservedEnd, c.turnBudget) : tail) push(m, 'tail');
  return pairToolCalls(dropOrphanResults({ messages: out, origins, compaction: c }));
}

/**
 * The log index of the last message the compaction in force saw. A snapshot that ended in the summary before it (a
 * second compaction with nothing new since the first) names that summary, which is not in the log: what it saw last
 * is then what that earlier compaction saw last. Undefined when the compaction saw no logged message.
 */
function lastSeenIndex(state: SessionState, idx: Map<string, number>): number | undefined {
  const layers = state.compactions;
  let id = layers[layers.length - 1]?.lastSnapshotId ?? null;
  for (let k = layers.length - 2; id !== null && !idx.has(id) && k >= 0; k--)
    if (layers[k]!.summary.id === id) id = layers[k]!.lastSnapshotId;
  return id !== null ? idx.get(id) : undefined;
}

const NO_CALLS: ReadonlySet<string> = new Set();

/**
 * Indices of the tool results that do not answer a call of the assistant message their run of results follows. A
 * strict server (OpenAI, vLLM with most chat templates) rejects such an orphan, and with it every later request:
 * one can follow a summary whose compaction took in its call (a split taken before the results were all in).
 */
export function orphanResultIndices(messages: readonly ChatMessage[]): number[] {
  const out: number[] = [];
  let calls: ReadonlySet<string> = NO_CALLS;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool') {
      if (!calls.has(m.tool_call_id)) out.push(i);
    } else calls = m.role === 'assistant' && m.tool_calls?.length ? new Set(m.tool_calls.map((c) => c.id)) : NO_CALLS;
  }
  return out;
}

/** Orphaned results are left out of what is sent; the log keeps them, so recall still finds them. */
function dropOrphanResults(ctx: ActiveContext): ActiveContext {
  const orphans = orphanResultIndices(ctx.messages);
  if (orphans.length === 0) return ctx;
  const drop = new Set(orphans);
  const keep = (_: unknown, i: number): boolean => !drop.has(i);
  return { messages: ctx.messages.filter(keep), origins: ctx.origins.filter(keep), compaction: ctx.compaction };
}

export const INTERRUPTED_RESULT =
  'Interrupted: this tool call did not finish (the session stopped before its result was recorded). Run it again if it is still needed.';
/** Stand-in results are `<assistant id>~interrupted~<call id>`: originalId maps them to the call's message. */
const INTERRUPTED_MARK = '~interrupted~';

/** True for the stand-in result that pairToolCalls adds; it is not in the log. */
export function isInterruptedResult(m: StoredMessage): boolean {
  return m.role === 'tool' && m.id.includes(INTERRUPTED_MARK);
}

/**
 * Chat APIs require every tool call to be answered before the next message.
 * A crash in the middle of a tool batch leaves calls without results; once
 * the batch is followed by another message (the user went on), each missing
 * result is filled in with an "interrupted" one, right after the results that
 * exist. A batch at the very end is left alone: its tools may still be running.
 */
function pairToolCalls(ctx: ActiveContext): ActiveContext {
  const { messages, origins } = ctx;
  let out: StoredMessage[] | undefined;
  let outOrigins: ActiveOrigin[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (out) {
      out.push(m);
      outOrigins!.push(origins[i]!);
    }
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
    let end = i + 1;
    const answered = new Set<string>();
    for (let r = messages[end]; r?.role === 'tool'; r = messages[++end]) answered.add(r.tool_call_id);
    const missing = m.tool_calls.filter((call) => !answered.has(call.id));
    if (missing.length === 0 || end === messages.length) continue;
    out ??= messages.slice(0, i + 1);
    outOrigins ??= origins.slice(0, i + 1);
    for (let j = i + 1; j < end; j++) {
      out.push(messages[j]!);
      outOrigins.push(origins[j]!);
    }
    for (const call of missing) {
      out.push({
        role: 'tool',
        tool_call_id: call.id,
        content: INTERRUPTED_RESULT,
        id: `${m.id}${INTERRUPTED_MARK}${call.id}`,
        timestamp: m.timestamp,
        kind: 'normal',
      });
      outOrigins.push(origins[i]!);
    }
    i = end - 1;
  }
  return out ? { messages: out, origins: outOrigins!, compaction: ctx.compaction } : ctx;
}

const CAPPED_SUFFIX = '~capped';

/** The stored message a (possibly capped, or stand-in) active-context message stands for. */
export function originalId(id: string): string {
  const mark = id.indexOf(INTERRUPTED_MARK);
  if (mark > 0) return id.slice(0, mark);
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
  const turns = splitIntoTurns(tail);
  // Agent output before the tail's first user message is held to the budget like a turn of its own.
  const lead = turns[0]?.start ?? tail.length;
  for (const { start: k, end } of lead > 0 ? [{ start: 0, end: lead }, ...turns] : turns) {
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

/**
 * The archived originals the summaries stand for: archived, less those whose capped or interrupted copy is still in
 * the context (the recent-turns strategy cuts a preserved turn's long outputs; their originals are archived for recall
 * but not summarised).
 */
export function summarisedMessages(state: SessionState, context: ActiveContext = activeContext(state)): StoredMessage[] {
  const inContext = new Set(context.messages.map((m) => originalId(m.id)));
  return state.messages.filter((m) => !inContext.has(m.id));
}
