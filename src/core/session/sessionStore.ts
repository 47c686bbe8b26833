import type { ChatMessage, MessageMeta, StoredMessage } from '../messages';
import { SessionCorruptError, SessionStateError } from './errors';
import { importMessages } from './importMessages';
import type { CompactionRecord, PinItem, SessionEvent, StoredVerdict } from './schema';
import { CALIBRATION_BASIS, describeIssues, sessionEventSchema } from './schema';
import { fingerprint, parseLogYielding } from './logReplay';
import type { ActiveContext, SessionState } from './sessionState';
import { activeContext, applyEvent, archivedMessages, summarisedMessages, buildIndex, checkEvent, emptyState } from './sessionState';

export { parseLog } from './logReplay';
import type { Clock, IdSource, SessionLock, SessionStorage } from './storage';
import { randomIds, systemClock } from './storage';

export interface OpenOptions {
  /** Never write: no backup, no repair on disk, and every change is refused. */
  readOnly?: boolean;
}

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
  /** Ids whose local token count is already in the log (in its message event or a counts event). */
  private readonly storedCounts = new Set<string>();

  private constructor(
    readonly path: string,
    private readonly state: SessionState,
    private readonly storage: SessionStorage,
    private readonly clock: Clock,
    private readonly ids: IdSource,
    /** Opened for reading only (`inspect`): nothing is ever written. */
    private readonly readOnly = false,
    /** The writer lock, held from opening to close(); absent when read-only or when the storage has none. */
    private readonly lock?: SessionLock,
  ) {
    this.index = buildIndex(state.messages);
    for (const m of countable(state)) if (m.tokens !== undefined) this.storedCounts.add(m.id);
  }

  /** Starts a new session file. Refuses to touch a file that already exists. */
  static async create(deps: StoreDeps, path: string, title?: string): Promise<SessionStore> {
    const clock = deps.clock ?? systemClock;
    const ids = deps.ids ?? randomIds;
    const header: SessionEvent = { type: 'session', v: 1, id: ids.next('s'), createdAt: clock.now(), ...(title ? { title } : {}) };
    const lock = await deps.storage.lock?.(path);
    return freedOnFailure(lock, async () => {
      await deps.storage.create(path, JSON.stringify(header) + '\n');
      return new SessionStore(path, emptyState(header.id, header.createdAt, title), deps.storage, clock, ids, false, lock);
    });
  }

  /**
   * Loads a session log. A damaged file raises SessionCorruptError naming the
   * first bad line, after a backup copy has been made; the file itself is left
   * exactly as it was.
   */
  static async open(deps: StoreDeps, path: string, options: OpenOptions = {}): Promise<SessionStore> {
    // Taken before reading: what is read must be what the next append follows.
    const lock = options.readOnly === true ? undefined : await deps.storage.lock?.(path);
    return freedOnFailure(lock, () => SessionStore.openLocked(deps, path, options, lock));
  }

  private static async openLocked(
    deps: StoreDeps,
    path: string,
    options: OpenOptions,
    lock: SessionLock | undefined,
  ): Promise<SessionStore> {
    const text = await deps.storage.read(path);
    if (text === undefined) throw new Error(`Session file ${path} does not exist`);
    const parsed = await parseLogYielding(text, pauseBriefly);
    const readOnly = options.readOnly === true;
    if (!parsed.ok) {
      const backup = readOnly ? undefined : await backUp(deps.storage, path, text, 'corrupt');
      throw new SessionCorruptError(path, parsed.line, parsed.reason, backup);
    }
    const store = new SessionStore(path, parsed.state, deps.storage, deps.clock ?? systemClock, deps.ids ?? randomIds, readOnly, lock);
    if (parsed.torn) {
      store.repairs.push(`dropped the incomplete last line ${parsed.torn.line} (an interrupted write)`);
      if (!readOnly) {
        // Kept once under a name from its contents; the rewrite below makes the next open clean.
        const backup = await backUp(deps.storage, path, text, 'torn');
        if (backup === undefined)
          throw new Error(`Session file ${path} ends in an incomplete line and could not be backed up; it was left as it is.`);
        // A line still being written by another process looks torn too: never cut a file that is growing.
        if ((await deps.storage.read(path)) !== text) {
          throw new Error(
            `Session file ${path} changed while it was being opened (is another Splitpoint writing to it?); it was left as it is.`,
          );
        }
        await deps.storage.writeAtomic(path, text.slice(0, parsed.torn.keptChars));
        store.repairs[store.repairs.length - 1] += `; the original is kept at ${backup}`;
      }
    } else if (parsed.unterminated && !readOnly) {
      // The last write lost only its newline: the next append would join that line.
      await deps.storage.append(path, '\n');
    }
    return store;
  }

  /** What opening repaired, in words (empty when the file was clean). */
  readonly repairs: string[] = [];

  /** Creates a session from a plain OpenAI messages array (already parsed JSON). */
  static async importArray(deps: StoreDeps, path: string, raw: unknown, title?: string): Promise<SessionStore> {
    const clock = deps.clock ?? systemClock;
    const ids = deps.ids ?? randomIds;
    const messages = importMessages(raw, ids, clock);
    const header: SessionEvent = { type: 'session', v: 1, id: ids.next('s'), createdAt: clock.now(), ...(title ? { title } : {}) };
    const lines = [header, ...messages.map((message): SessionEvent => ({ type: 'message', message }))].map((e) => JSON.stringify(e));
    const exists = new Error(`Refusing to import over existing file ${path}`);
    if (await deps.storage.exists(path)) throw exists;
    // Created exclusively, so of two imports to one path the second fails instead of replacing the first one's log.
    const lock = await deps.storage.lock?.(path);
    return freedOnFailure(lock, async () => {
      await deps.storage.create(path, lines.join('\n') + '\n').catch(async (err: unknown) => {
        throw (await deps.storage.exists(path)) ? exists : err;
      });
      return SessionStore.openLocked(deps, path, {}, lock);
    });
  }

  get id(): string {
    return this.state.id;
  }

  private closed = false;

  /**
   * Waits for the writes queued so far, then frees the writer lock so another process may write the session. Every
   * change after this is refused. Safe to call more than once.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    await this.lock?.release();
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
    if (this.activeMemo?.version !== this.version)
      this.activeMemo = { version: this.version, value: activeContext(this.state, this.index) };
    return this.activeMemo.value;
  }

  archived(): StoredMessage[] {
    return archivedMessages(this.state, this.active());
  }

  /** The archived originals the summaries in force stand for (summarisedMessages). */
  summarised(): StoredMessage[] {
    return summarisedMessages(this.state, this.active());
  }

  hasMessage(id: string): boolean {
    return this.index.has(id);
  }

  newMessageId(): string {
    return this.ids.next('m');
  }

  /** Adds a message; id, timestamp and kind are filled in when missing. */
  async append(message: ChatMessage & Partial<MessageMeta>): Promise<StoredMessage> {
    const full = {
      kind: 'normal',
      ...message,
      id: message.id ?? this.ids.next('m'),
      timestamp: message.timestamp ?? this.clock.now(),
    } as StoredMessage;
    await this.commit({ type: 'message', message: full });
    return full;
  }

  async adoptCompaction(
    record: Omit<CompactionRecord, 'id' | 'at'> & Partial<Pick<CompactionRecord, 'id' | 'at'>>,
  ): Promise<CompactionRecord> {
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

  /**
   * Changes the pins from the list current when the change's turn comes in
   * the commit queue, so overlapping changes (a user pin while the agent's
   * `pin` tool runs) all survive. `change` returning undefined or a list with
   * the same items writes nothing. Resolves to whether a pins event was written.
   */
  async updatePins(change: (pins: readonly PinItem[]) => PinItem[] | undefined): Promise<boolean> {
    return this.commitFrom(() => {
      const before = this.state.pins;
      const pins = change(before);
      if (!pins || (pins.length === before.length && pins.every((p, i) => p === before[i]))) return undefined;
      return { type: 'pins', pins, at: this.clock.now() };
    });
  }

  async setFocus(focus: string | null): Promise<void> {
    await this.commit({ type: 'focus', focus, at: this.clock.now() });
  }

  /** Records the judge's verdict on a compaction's summary, so it is shown again after reopening. */
  async recordVerdict(compactionId: string, attempt: number, verdict: StoredVerdict['verdict']): Promise<void> {
    await this.commit({ type: 'verdict', compactionId, attempt, verdict, at: this.clock.now() });
  }

  /**
   * Records the token calibration. A factor within 0.5 % of the one recorded
   * is not written again, so a long run adds a line only when it learns something.
   */
  async recordCalibration(c: { factor: number; samples: number }): Promise<boolean> {
    const last = this.state.calibration;
    if (!(c.factor > 0) || !Number.isFinite(c.factor)) return false;
    if (last && Math.abs(c.factor - last.factor) <= last.factor * 0.005) return false;
    const samples = Math.max(0, Math.floor(c.samples));
    await this.commit({ type: 'calibration', factor: c.factor, samples, basis: CALIBRATION_BASIS, at: this.clock.now() });
    return true;
  }

  /** Messages and summaries that carry no local token count yet (what a counter should fill in). */
  uncounted(): StoredMessage[] {
    return countable(this.state).filter((m) => m.tokens === undefined);
  }

  /**
   * Writes the counts that were made since the log last recorded them (one
   * line), so the next open does not tokenise those messages again. Returns
   * how many were written. `counter` names the counter that made them.
   */
  async persistCounts(counter: string): Promise<number> {
    const counts: Record<string, number> = {};
    let n = 0;
    for (const m of countable(this.state)) {
      if (m.tokens === undefined || this.storedCounts.has(m.id)) continue;
      counts[m.id] = m.tokens;
      n++;
    }
    if (n === 0) return 0;
    await this.commit({ type: 'counts', counter, counts, at: this.clock.now() });
    for (const id of Object.keys(counts)) this.storedCounts.add(id);
    return n;
  }

  /** Validates, writes, then applies; writes are serialised so the log order is the call order. */
  private async commit(e: SessionEvent): Promise<void> {
    await this.commitFrom(() => e);
  }

  /**
   * commit, with the event made when its turn comes (from the state every
   * earlier queued event has been applied to); `make` returning undefined
   * writes nothing. Resolves to whether an event was written.
   */
  private commitFrom(make: () => SessionEvent | undefined): Promise<boolean> {
    // Refused when asked, not when its turn comes: close() lets the changes queued before it finish.
    if (this.closed) return Promise.reject(new SessionStateError(`session ${this.path} is closed`));
    const run = async (): Promise<boolean> => {
      if (this.readOnly) throw new SessionStateError(`session ${this.path} was opened read-only`);
      const e = make();
      if (!e) return false;
      const valid = sessionEventSchema.safeParse(e);
      if (!valid.success) throw new SessionStateError(`invalid ${e.type} event: ${describeIssues(valid.error)}`);
      checkEvent(this.state, e, this.index);
      await this.storage.append(this.path, JSON.stringify(e) + '\n');
      applyEvent(this.state, e, this.index);
      if (e.type === 'message' && e.message.tokens !== undefined) this.storedCounts.add(e.message.id);
      this.version++;
      for (const l of this.listeners) l(e);
      return true;
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** Everything in the state that a token count belongs to: originals and every compaction's summary. */
function countable(state: SessionState): StoredMessage[] {
  return [...state.messages, ...state.compactions.map((c) => c.summary), ...state.undone.map((c) => c.summary)];
}

/** True when the text is a Splitpoint session log (its first line is the session header), not a messages array. */
export function isSessionLog(text: string): boolean {
  const head = text.trimStart();
  const nl = head.indexOf('\n');
  return head.startsWith('{') && /"type"\s*:\s*"session"/.test(nl >= 0 ? head.slice(0, nl) : head);
}

/**
 * Backs the file up under a name made from its contents, so opening the same
 * damaged file again does not add another copy.
 */
async function backUp(storage: SessionStorage, path: string, text: string, kind: 'corrupt' | 'torn'): Promise<string | undefined> {
  const target = `${path}.${kind}-${fingerprint(text)}.bak`;
  try {
    if (!(await storage.exists(target))) await storage.copy(path, target);
    return target;
  } catch {
    return undefined;
  }
}

/** Runs `f` holding the lock, which the store it makes keeps; freed again if `f` fails. */
async function freedOnFailure<T>(lock: SessionLock | undefined, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    await lock?.release();
    throw err;
  }
}

/** Lets the event loop run between slices of a long replay. */
const pauseBriefly = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
