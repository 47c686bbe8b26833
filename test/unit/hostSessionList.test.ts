import assert from 'node:assert/strict';
import type { LibraryEntry } from '../../src/host/sessionLibrary';
import type { SessionListItem } from '../../src/protocol/messages';
import { installFakeVscode } from './helpers/fakeVscode';

/** The host's private session-list plumbing, reached on an instance loaded against the fake `vscode`. */
interface HostInternals {
  activeId: string | undefined;
  library: { invalidate(id: string): void; list(): Promise<LibraryEntry[]> } | undefined;
  listCache: SessionListItem[];
  refreshList(): Promise<void>;
  describeSessions(store: unknown): { session: SessionListItem; sessions: SessionListItem[] };
}

function makeHost(): HostInternals {
  const { uninstall } = installFakeVscode();
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { SplitpointHost } = require('../../src/host/host') as typeof import('../../src/host/host');
    const log = { info() {}, warn() {}, error() {}, debug() {}, trace() {} };
    const context = { globalState: { get: () => undefined, update: async () => undefined } };
    return new SplitpointHost(context as never, log as never, { visible: false, post() {} } as never) as unknown as HostInternals;
  } finally {
    uninstall();
  }
}

const DAY = 86_400_000;
const T0 = 1_700_000_000_000;

describe('host: the session list carries last use and size', () => {
  const entries: LibraryEntry[] = [
    { id: 'cur', path: '/s/cur.jsonl', title: 'Current', createdAt: T0, messageCount: 2, lastUsedAt: T0 + DAY, bytes: 4096 },
    { id: 'old', path: '/s/old.jsonl', title: 'Old', createdAt: T0 - 9 * DAY, messageCount: 7, lastUsedAt: T0 - 2 * DAY, bytes: 200_000 },
  ];

  it('keeps each listed session’s lastUsedAt and bytes, and drops the file path', async () => {
    const host = makeHost();
    host.library = { invalidate() {}, list: async () => entries };
    await host.refreshList();
    assert.deepEqual(host.listCache, [
      { id: 'cur', title: 'Current', createdAt: T0, messageCount: 2, lastUsedAt: T0 + DAY, bytes: 4096 },
      { id: 'old', title: 'Old', createdAt: T0 - 9 * DAY, messageCount: 7, lastUsedAt: T0 - 2 * DAY, bytes: 200_000 },
    ]);
  });

  it('the current session was last used at its newest message, not when it was created, and keeps its listed size', async () => {
    const host = makeHost();
    host.library = { invalidate() {}, list: async () => entries };
    await host.refreshList();
    host.activeId = 'cur';
    const messages = [
      { role: 'system', content: 's', timestamp: T0 },
      { role: 'user', content: 'go', timestamp: T0 + 3 * DAY },
      { role: 'assistant', content: 'ok', timestamp: T0 + 2 * DAY },
    ];
    const store = { id: 'cur', snapshot: { title: 'Current', createdAt: T0, messages } };
    const { session, sessions } = host.describeSessions(store);
    assert.equal(session.lastUsedAt, T0 + 3 * DAY);
    assert.equal(session.bytes, 4096);
    assert.equal(session.messageCount, 3);
    assert.deepEqual(sessions[0], session);
    assert.equal(sessions[1]!.lastUsedAt, T0 - 2 * DAY);
    assert.equal(sessions[1]!.bytes, 200_000);
  });

  it('with no newer message the listed last use stands, and a session not listed yet was last used when created', () => {
    const host = makeHost();
    host.listCache = [{ id: 'cur', title: 'Current', createdAt: T0, messageCount: 1, lastUsedAt: T0 + DAY, bytes: 10 }];
    host.activeId = 'cur';
    const at = (id: string, messages: { timestamp: number }[]) =>
      host.describeSessions({ id, snapshot: { title: 't', createdAt: T0, messages } }).session.lastUsedAt;
    assert.equal(at('cur', [{ timestamp: T0 + 1000 }]), T0 + DAY);
    host.activeId = 'new';
    assert.equal(at('new', []), T0);
  });
});
