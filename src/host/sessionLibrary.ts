import { SessionCorruptError, SessionLockedError } from '../core/session/errors';
import { isSessionLog, parseLog, SessionStore } from '../core/session/sessionStore';
import { elapsedNow, type Clock, type IdSource, type SessionStorage } from '../core/session/storage';
import type { SessionListItem } from '../protocol/messages';

/**
 * The workspace's sessions: one JSONL event log per session in one folder
 * (the extension's workspace storage). Lists them cheaply, creates, opens
 * and imports. No 'vscode' here; the host passes Node file storage and the
 * folder, tests pass memory storage.
 */
export interface LibraryEntry extends SessionListItem {
  path: string;
  /** Set when the file cannot be read as a session; opening it reports the line. */
  damaged?: string;
}

const EXT = '.jsonl';

/** A title from the first user message, for sessions created before one existed. */
export function titleFrom(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 57)}…` : one || 'Untitled session';
}

/** Reads what the list needs without replaying the log: header, message count, first user line. */
export function summarizeLog(id: string, path: string, text: string): LibraryEntry {
  const nl = text.indexOf('\n');
  const first = nl >= 0 ? text.slice(0, nl) : text;
  let header: { type?: unknown; createdAt?: unknown; title?: unknown };
  try {
    header = JSON.parse(first) as typeof header;
  } catch {
    return { id, path, title: `${id} (damaged)`, createdAt: 0, messageCount: 0, damaged: 'the first line is not JSON' };
  }
  if (header.type !== 'session') return { id, path, title: `${id} (damaged)`, createdAt: 0, messageCount: 0, damaged: 'no session header' };
  let messageCount = 0;
  let firstUser: string | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('{"type":"message"')) continue;
    messageCount++;
    if (firstUser === undefined && line.includes('"role":"user"')) {
      try {
        const e = JSON.parse(line) as { message?: { role?: string; content?: unknown; kind?: string } };
        if (e.message?.role === 'user' && e.message.kind !== 'pinned' && typeof e.message.content === 'string')
          firstUser = e.message.content;
      } catch {
        // A damaged line is reported when the session is opened.
      }
    }
  }
  const title =
    typeof header.title === 'string' && header.title ? header.title : firstUser !== undefined ? titleFrom(firstUser) : 'New session';
  const createdAt = typeof header.createdAt === 'number' ? header.createdAt : 0;
  return { id, path, title, createdAt, messageCount, lastUsedAt: lastTime(text, createdAt), bytes: byteLength(text) };
}

/** The latest event or message time in the log: when the session was last used. */
function lastTime(text: string, fallback: number): number {
  let last = fallback;
  for (const m of text.matchAll(/"(?:at|timestamp)":(\d{9,})/g)) {
    const t = Number(m[1]);
    if (t > last) last = t;
  }
  return last;
}

function byteLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 ? (i++, 4) : 3;
  }
  return n;
}

/** What library ids look like (see newId); also allows ids of files users copied into the folder. */
const SAFE_ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}$/;

export class SessionLibrary {
  /**
   * Summaries by id. The active session is invalidated as it changes; another process (`splitpoint compact --adopt`)
   * may write any other one, so an entry is read again when the file's size is not the one it was summarised at.
   */
  private readonly cache = new Map<string, LibraryEntry>();

  constructor(
    private readonly storage: SessionStorage,
    readonly dir: string,
    private readonly clock: Clock,
    private readonly ids: IdSource,
  ) {}

  /** The file of a session. Ids come from the webview too, so anything but a plain file name is refused. */
  pathFor(id: string): string {
    if (!SAFE_ID.test(id) || id.includes('..')) {
      throw new Error(`Invalid session id ${JSON.stringify(id.slice(0, 80))}: ids are file names without path separators or "..".`);
    }
    return this.storage.join(this.dir, `${id}${EXT}`);
  }

  /** Newest first. Backups (`.bak`) and temp files are not sessions. */
  async list(): Promise<LibraryEntry[]> {
    const names = (await this.storage.list(this.dir)).filter((n) => n.endsWith(EXT));
    const out: LibraryEntry[] = [];
    for (const name of names) {
      const id = name.slice(0, -EXT.length);
      let entry = this.cache.get(id);
      if (entry && this.storage.size && (await this.storage.size(entry.path)) !== entry.bytes) entry = undefined;
      if (!entry) {
        const text = await this.storage.read(this.pathFor(id));
        if (text === undefined) continue;
        entry = summarizeLog(id, this.pathFor(id), text);
        this.cache.set(id, entry);
      }
      out.push(entry);
    }
    return out.sort((a, b) => (b.lastUsedAt ?? b.createdAt) - (a.lastUsedAt ?? a.createdAt) || a.id.localeCompare(b.id));
  }

  /** Forget a cached summary (the session was active and changed). */
  invalidate(id: string): void {
    this.cache.delete(id);
  }

  private newId(): string {
    const stamp = new Date(this.clock.now()).toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
    return `${stamp}-${this.ids.next('s').replace(/^s_/, '').slice(0, 6)}`;
  }

  async create(title?: string): Promise<{ id: string; store: SessionStore }> {
    const id = this.newId();
    const store = await SessionStore.create({ storage: this.storage, clock: this.clock, ids: this.ids }, this.pathFor(id), title);
    this.cache.delete(id);
    return { id, store };
  }

  /**
   * Opens a session. A damaged file raises the core's SessionCorruptError (line, backup) and is left as it is; one
   * another process writes raises SessionLockedError, after waiting up to `waitForLockMs` for it to be freed.
   */
  async open(id: string, waitForLockMs = 0): Promise<SessionStore> {
    this.cache.delete(id);
    const until = elapsedNow(this.clock) + waitForLockMs;
    for (;;) {
      try {
        return await SessionStore.open({ storage: this.storage, clock: this.clock, ids: this.ids }, this.pathFor(id));
      } catch (err) {
        if (!(err instanceof SessionLockedError) || elapsedNow(this.clock) >= until) throw err;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /**
   * Imports a Splitpoint log or a plain OpenAI messages array as a new
   * session. Nothing is written unless the whole input is valid, except that
   * a log's incomplete last line (an interrupted write) is left out, as
   * opening would drop it; the store's `repairs` then says so.
   */
  async importText(text: string, sourceName: string): Promise<{ id: string; store: SessionStore; kind: 'log' | 'messages' }> {
    const id = this.newId();
    const path = this.pathFor(id);
    if (isSessionLog(text)) {
      const head = text.trimStart();
      const parsed = parseLog(head);
      if (!parsed.ok) throw new SessionCorruptError(sourceName, parsed.line, parsed.reason, undefined);
      // Written with a newline, a torn last line would become a damaged line the session could not be opened past.
      const kept = parsed.torn ? head.slice(0, parsed.torn.keptChars) : head;
      await this.storage.writeAtomic(path, kept.endsWith('\n') ? kept : `${kept}\n`);
      const store = await this.open(id);
      if (parsed.torn) {
        store.repairs.push(
          `the import left out the incomplete last line ${parsed.torn.line} of ${sourceName} (an interrupted write); that file is unchanged`,
        );
      }
      return { id, store, kind: 'log' };
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new Error(`${sourceName} is neither a Splitpoint session log (JSONL) nor a JSON messages array: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const title = sourceName.replace(/^.*[\\/]/, '').replace(/\.[^.]+$/, '');
    const store = await SessionStore.importArray(
      { storage: this.storage, clock: this.clock, ids: this.ids },
      path,
      raw,
      `Imported: ${title}`,
    );
    return { id, store, kind: 'messages' };
  }
}
