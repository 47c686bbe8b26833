import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage, StoredMessage } from '../../src/core/messages';
import { SessionStore } from '../../src/core/session/sessionStore';
import { NodeFileStorage } from '../../src/node/fileStorage';
import { startSimulator, type SimHandle } from '../sim';

/**
 * Crash suite: the built CLI is killed with SIGKILL at random moments of
 * `run` (tool batches, writes, streaming) and `compact --adopt`, and after
 * every kill the session must open, hold no half-adopted compaction, pair
 * every tool call with a result by the time the next request is sent, and
 * resume. The seed is printed so a failure can be replayed (CRASH_SEED=…).
 */
const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');
const RUN_KILLS = 40;
const COMPACT_KILLS = 22;
const RESUME_EVERY = 4;
const PARALLEL = 3;

let seed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
function random(): number {
  // mulberry32: small, seedable, good enough to spread kill times.
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

function runCli(args: string[], killAfterMs?: number): Promise<{ code: number | null; signal: string | null; out: string; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, out, ms: Date.now() - t0 });
    });
  });
}

/** Tool call ids that have no tool result after them, in a message sequence as it is sent. */
function unpairedCalls(messages: readonly ChatMessage[]): string[] {
  const answered = new Set(messages.filter((m) => m.role === 'tool').map((m) => (m as { tool_call_id: string }).tool_call_id));
  return messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [])).filter((id) => !answered.has(id));
}

/** Opens the log for writing, as the next run would (repairing a torn line), and closes it again so the next run may. */
async function openChecked(path: string): Promise<SessionStore> {
  const store = await SessionStore.open({ storage: new NodeFileStorage() }, path);
  await store.close();
  const s = store.snapshot as unknown as { messages: StoredMessage[]; compactions: Array<{ summary?: unknown; tailStartId?: string }> };
  assert.ok(s.compactions.length <= 1, 'at most the one compaction that was asked for');
  return store;
}

const SCRIPT = [
  {
    match: 'TASK',
    repeat: true,
    content: 'Reading and writing at once.',
    tool_calls: [
      { name: 'write_file', arguments: { path: 'out/a.txt', content: 'alpha\n'.repeat(50) } },
      // A slow call in the middle of the batch: kills land between one result and the next.
      { name: 'run_command', arguments: { command: 'sleep 0.25; echo slept' } },
      { name: 'read_file', arguments: { path: 'notes.txt' } },
      { name: 'list_files', arguments: { path: '.' } },
    ],
  },
  {
    match: 'notes.txt',
    repeat: true,
    content: 'One more check.',
    tool_calls: [{ name: 'run_command', arguments: { command: 'echo step-two' } }],
  },
  { match: 'step-two', repeat: true, content: 'Done: the port is 8123, written to out/a.txt.' },
  { match: 'RESUME', repeat: true, content: 'Resumed and finished.' },
];

describe('crash suite: SIGKILL during run and compact --adopt', function () {
  this.timeout(180_000);
  let sim: SimHandle;
  let ws: string;
  const stats = { runKills: 0, compactKills: 0, resumes: 0, killedMidWrite: 0 };
  const unpaired: string[] = [];

  before(async function () {
    if (process.platform === 'win32') this.skip();
    if (!existsSync(CLI)) spawnSync(process.execPath, [join(ROOT, 'esbuild.mjs')], { stdio: 'inherit', cwd: ROOT });
    // Real time at a tenth of the profile's speed: a run lasts long enough for kills to land everywhere.
    sim = await startSimulator({ timeScale: 0.1 });
    sim.setScript(SCRIPT);
    ws = mkdtempSync(join(tmpdir(), 'sp-crash-'));
    writeFileSync(join(ws, 'notes.txt'), 'The service listens on port 8123.\n');
    console.log(`      [crash] seed ${seed}`);
  });
  after(async () => {
    console.log(`      [crash] ${JSON.stringify(stats)}`);
    await sim?.close();
  });

  it(`run: ${RUN_KILLS} kills at random moments; each session opens and resumes with every tool call paired`, async () => {
    const runArgs = (session: string, task: string) => [
      'run',
      '--endpoint',
      sim.url,
      '--workspace',
      ws,
      '--task',
      task,
      '--session',
      session,
      '--yes',
      '--json',
    ];
    const base = await runCli(runArgs(join(ws, 'base.jsonl'), 'TASK: find the port'));
    assert.equal(base.code, 0, base.out);
    console.log(`      [crash] an unkilled run takes ${base.ms} ms`);
    for (let k0 = 0; k0 < RUN_KILLS; k0 += PARALLEL) {
      // A few at once: the suite stays within about a minute, and the load spreads kill points further.
      const batch = Array.from({ length: Math.min(PARALLEL, RUN_KILLS - k0) }, (_, i) => ({
        k: k0 + i,
        session: join(ws, `run-${k0 + i}.jsonl`),
        killAt: Math.floor(random() * base.ms),
      }));
      const results = await Promise.all(batch.map((b) => runCli(runArgs(b.session, 'TASK: find the port'), b.killAt)));
      for (const [i, { k, session, killAt }] of batch.entries()) {
        if (results[i]!.signal === 'SIGKILL') stats.runKills++;
        if (!existsSync(session)) continue; // killed before the log was created: nothing to check
        if (!readFileSync(session, 'utf8').endsWith('\n')) stats.killedMidWrite++;
        await openChecked(session);
        if (k % RESUME_EVERY !== 0) continue;
        const again = await runCli(runArgs(session, 'RESUME: carry on'));
        assert.equal(again.code, 0, `resume after a kill at ${killAt} ms: ${again.out}`);
        stats.resumes++;
        // Collected, not thrown at once, so every kill still happens and the report shows how many failed.
        const sent = unpairedCalls((sim.lastChatBody()?.messages ?? []) as ChatMessage[]);
        if (sent.length > 0) unpaired.push(`kill ${k} at ${killAt} ms: the next request had ${sent.length} tool call(s) without a result`);
        // The log keeps what happened; the context built from it pairs every call (an "interrupted" result fills a gap).
        const logged = unpairedCalls((await openChecked(session)).active().messages as unknown as ChatMessage[]);
        if (logged.length > 0)
          unpaired.push(`kill ${k} at ${killAt} ms: the active context keeps ${logged.length} tool call(s) without a result`);
      }
    }
    assert.deepEqual(unpaired, [], 'every tool call is paired with a result before the next request');
    assert.ok(stats.runKills >= RUN_KILLS * 0.8, `${stats.runKills} of ${RUN_KILLS} runs were killed before they ended`);
  });

  it(`compact --adopt: ${COMPACT_KILLS} kills; never a half-adopted compaction, and a rerun adopts`, async () => {
    const source = join(ws, 'source.jsonl');
    const raw = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'example-session.json'), 'utf8')) as unknown;
    await (await SessionStore.importArray({ storage: new NodeFileStorage() }, source, raw, 'crash')).close();
    const args = (f: string) => ['compact', '--session', f, '--endpoint', sim.url, '--adopt', '--block-tokens', '1024', '--json'];
    // Timed warm (the second of two), as the killed ones mostly run with the prefix cache warm.
    let whole = { code: 0 as number | null, out: '', ms: 0 };
    for (const n of [0, 1]) {
      copyFileSync(source, join(ws, `probe-${n}.jsonl`));
      whole = await runCli(args(join(ws, `probe-${n}.jsonl`)));
      assert.equal(whole.code, 0, whole.out);
      assert.equal((await openChecked(join(ws, `probe-${n}.jsonl`))).snapshot.compactions.length, 1);
    }
    console.log(`      [crash] an unkilled compact --adopt takes ${whole.ms} ms`);
    const before = readFileSync(source, 'utf8');
    for (let k0 = 0; k0 < COMPACT_KILLS; k0 += PARALLEL) {
      const batch = Array.from({ length: Math.min(PARALLEL, COMPACT_KILLS - k0) }, (_, i) => join(ws, `compact-${k0 + i}.jsonl`));
      for (const f of batch) copyFileSync(source, f);
      const results = await Promise.all(batch.map((f) => runCli(args(f), Math.floor(random() * whole.ms))));
      for (const [i, f] of batch.entries()) {
        if (results[i]!.signal === 'SIGKILL') stats.compactKills++;
        const store = await openChecked(f);
        const adopted = store.snapshot.compactions.length;
        if (adopted === 0) assert.equal(readFileSync(f, 'utf8').startsWith(before), true, 'nothing of the original log is lost');
        else assert.ok(String(store.snapshot.compactions[0]!.summary.content ?? '').length > 0, 'an adopted compaction is whole');
        if (adopted === 0 && (k0 + i) % 4 === 0) {
          const again = await runCli(args(f));
          assert.equal(again.code, 0, again.out);
          assert.equal((await openChecked(f)).snapshot.compactions.length, 1, 'the rerun adopts');
          stats.resumes++;
        }
      }
    }
    assert.ok(stats.compactKills >= COMPACT_KILLS * 0.75, `${stats.compactKills} of ${COMPACT_KILLS} compactions were killed`);
  });

  it('killed the CLI at least 50 times in all', () => {
    assert.ok(stats.runKills + stats.compactKills >= 50, `only ${stats.runKills + stats.compactKills} kills`);
  });
});
