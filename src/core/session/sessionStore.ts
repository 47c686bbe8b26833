import type { ChatMessage, MessageMeta, StoredMessage } from '../messages';
import { SessionCorruptError, SessionStateError } from './errors';
import { importMessages } from './importMessages';
import type { CompactionRecord, PinItem, SessionEvent } from './schema';
import { describeIssues, sessionEventSchema } from './schema';
import type { ActiveContext, SessionState } from './sessionState';
import { activeContext, applyEvent, archivedMessages, buildIndex, checkEvent, emptyState } from './sessionState';
import type { Clock, IdSource, SessionStorage } from './storage';
import { randomIds, systemClock } from './storage';

export interface StoreDeps {
  storage: SessionStorage;
  clock?: Clock;
  ids?: IdSource;
}

/**
 * A session backed by an append-only JSONL event log. Every change is one
 * line appended and flushed before the in-memory state changes, so a crash
 * loses at most the event being written and never corrupts earlier ones.
 */
export class SessionStore {
  private index: Map<string, number>;
  private queue: Promise<unknown> = Promise.resolve();
  private listeners = new Set<(e: SessionEvent) => void>();
  /** Bumped by every committed event; keys the memoised active context. */
  private version = 0;
  private activeMemo: { version: number; value: ActiveContext } | undefined;

  private constructor(
    readonly path: string,
    private readonly state: SessionState,
    private readonly storage: SessionStorage,
    private readonly clock: Clock,
    private readonly ids: IdSource,
  ) {
    this.index = buildIndex(state.messages);
  }

  /** Starts a new session file. Refuses to touch a file that already exists. */
  static async create(deps: StoreDeps, path: string, title?: string): Promise<SessionStore> {
    const clock = deps.clock ?? systemClock;
    const ids = deps.ids ?? randomIds;
    const header: SessionEvent = { type: 'session', v: 1, id: ids.next('s'), createdAt: clock.now(), ...(title ? { title } : {}) };
    await deps.storage.create(path, JSON.stringify(header) + '\n');
    return new SessionStore(path, emptyState(header.id, header.createdAt, title), deps.storage, clock, ids);
  }

  /**
   * Loads a session log. A damaged file raises SessionCorruptError naming the
   * first bad line, after a backup copy has been made; the file itself is left
   * exactly as it was.
   */
  static async open(deps: StoreDeps, path: string): Promise<SessionStore> {
    const text = await deps.storage.read(path);
    if (text === undefined) throw new Error(`Session file ${path} does not exist`);
    const parsed = parseLog(text);
    if (!parsed.ok) {
      const backup = await backUp(deps.storage, path, deps.clock ?? systemClock);
      throw new SessionCorruptError(path, parsed.line, parsed.reason, backup);
    }
    return new SessionStore(path, parsed.state, deps.storage, deps.clock ?? systemClock, deps.ids ?? randomIds);
  }

  /** Creates a session from a plain OpenAI messages array (already parsed JSON). */
  static async importArray(deps: StoreDeps, path: string, raw: unknown, title?: string): Promise<SessionStore> {
    const clock = deps.clock ?? systemClock;
    const ids = deps.ids ?? randomIds;
    const messages = importMessages(raw, ids, clock);
    const header: SessionEvent = { type: 'session', v: 1, id: ids.next('s'), createdAt: clock.now(), ...(title ? { title } : {}) };
    const lines = [header, ...messages.map((message): SessionEvent => ({ type: 'message', message }))].map((e) => JSON.stringify(e));
    if (await deps.storage.exists(path)) throw new Error(`Refusing to import over existing file ${path}`);
    await deps.storage.writeAtomic(path, lines.join('\n') + '\n');
    return SessionStore.open(deps, path);
  }

  get id(): string {
    return this.state.id;
  }

  /** A read-only view; mutate only through the methods below. */
  get snapshot(): Readonly<SessionState> {
    return this.state;
  }

  onEvent(listener: (e: SessionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The spliced context, rebuilt only after an event changed the session
   * (the agent asks for it several times per step). Treat it as read-only.
   */
  active(): ActiveContext {
    if (this.activeMemo?.version !== this.version) this.activeMemo = { version: this.version, value: activeContext(this.state, this.index) };
    return this.activeMemo.value;
  }

  archived(): StoredMessage[] {
    return archivedMessages(this.state, this.active());
  }

  hasMessage(id: string): boolean {
    return this.index.has(id);
  }

  newMessageId(): string {
    return this.ids.next('m');
  }

  /** Adds a message; id, timestamp and kind are filled in when missing. */
  async append(message: ChatMessage & Partial<MessageMeta>): Promise<StoredMessage> {
    const full = { kind: 'normal', ...message, id: message.id ?? this.ids.next('m'), timestamp: message.timestamp ?? this.clock.now() } as StoredMessage;
    await this.commit({ type: 'message', message: full });
    return full;
  }

  async adoptCompaction(record: Omit<CompactionRecord, 'id' | 'at'> & Partial<Pick<CompactionRecord, 'id' | 'at'>>): Promise<CompactionRecord> {
    const full: CompactionRecord = { ...record, id: record.id ?? this.ids.next('c'), at: record.at ?? this.clock.now() };
    await this.commit({ type: 'compaction', compaction: full });
    return full;
  }

  /** Peels off the compaction in force; the one before it (if any) is in force again. */
  async undoCompaction(): Promise<CompactionRecord> {
    const top = this.state.compactions[this.state.compactions.length - 1];
    if (!top) throw new SessionStateError('There is no compaction to undo.');
    await this.commit({ type: 'undo', compactionId: top.id, at: this.clock.now() });
    return top;
  }

  async setPins(pins: PinItem[]): Promise<void> {
    await this.commit({ type: 'pins', pins, at: this.clock.now() });
  }

  async setFocus(focus: string | null): Promise<void> {
    await this.commit({ type: 'focus', focus, at: this.clock.now() });
  }

  /** Validates, writes, then applies; writes are serialised so the log order is the call order. */
  private commit(e: SessionEvent): Promise<void> {
    const run = async (): Promise<void> => {
      const valid = sessionEventSchema.safeParse(e);
      if (!valid.success) throw new SessionStateError(`invalid ${e.type} event: ${describeIssues(valid.error)}`);
      checkEvent(this.state, e, this.index);
      await this.storage.append(this.path, JSON.stringify(e) + '\n');
      applyEvent(this.state, e, this.index);
      this.version++;
      for (const l of this.listeners) l(e);
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** True when the text is a Splitpoint session log (its first line is the session header), not a messages array. */
export function isSessionLog(text: string): boolean {
  const head = text.trimStart();
  const nl = head.indexOf('\n');
  return head.startsWith('{') && /"type"\s*:\s*"session"/.test(nl >= 0 ? head.slice(0, nl) : head);
}

type ParseResult = { ok: true; state: SessionState } | { ok: false; line: number; reason: string };

/** Parses and replays a JSONL log without touching storage. */
export function parseLog(text: string): ParseResult {
  const lines = text.split('\n');
  // A file always ends with a newline; the empty string after it is not a line.
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) return { ok: false, line: 1, reason: 'the file is empty (no session header)' };
  let state: SessionState | undefined;
  let index = new Map<string, number>();
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = lines[i]!;
    if (raw.trim() === '') return { ok: false, line: lineNo, reason: 'blank line' };
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (err) {
      const torn = i === lines.length - 1 && !text.endsWith('\n');
      return {
        ok: false,
        line: lineNo,
        reason: torn ? 'the last line is incomplete (the write was interrupted)' : `not valid JSON (${(err as Error).message})`,
      };
    }
    const ev = sessionEventSchema.safeParse(json);
    if (!ev.success) return { ok: false, line: lineNo, reason: `not a valid session event: ${describeIssues(ev.error)}` };
    const e = ev.data;
    if (i === 0) {
      if (e.type !== 'session') return { ok: false, line: 1, reason: `the first line must be the session header, found a "${e.type}" event` };
      state = emptyState(e.id, e.createdAt, e.title);
      index = new Map();
      continue;
    }
    try {
      checkEvent(state!, e, index);
      applyEvent(state!, e, index);
    } catch (err) {
      return { ok: false, line: lineNo, reason: (err as Error).message };
    }
  }
  return { ok: true, state: state! };
}

async function backUp(storage: SessionStorage, path: string, clock: Clock): Promise<string | undefined> {
  const stamp = new Date(clock.now()).toISOString().replace(/[:.]/g, '-');
  const target = `${path}.corrupt-${stamp}.bak`;
  try {
    if (!(await storage.exists(target))) await storage.copy(path, target);
    return target;
  } catch {
    return undefined;
  }
}
