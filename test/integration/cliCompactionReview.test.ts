import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startSimulator } from '../sim';
import type { SimHandle } from '../sim';

const root = join(__dirname, '..', '..');
const example = join(root, 'test', 'fixtures', 'example-session.json');

/** The built CLI, asynchronously (the simulator serves from this process's event loop). */
function cli(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [join(root, 'dist', 'cli.js'), ...args], { maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin?.end();
  });
}

/** The example session imported into a log of its own, in a new folder. */
async function exampleLog(): Promise<{ dir: string; log: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sp-review-'));
  const log = join(dir, 'example.jsonl');
  const r = await cli('import', example, '--out', log);
  assert.equal(r.status, 0, r.stderr);
  return { dir, log };
}

type LogEvent = { type: string; compaction?: { summary: { content: string }; depth: number } };
const events = (log: string) =>
  readFileSync(log, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as LogEvent);

describe('the CLI after review: adoption guard, split agreement, trigger wording, summaries, failure output (built CLI)', function () {
  this.timeout(60_000);
  let sim: SimHandle;
  before(async () => {
    assert.ok(existsSync(join(root, 'dist', 'cli.js')), 'dist/cli.js is missing: run "node esbuild.mjs" first');
    sim = await startSimulator({ maxModelLen: 32_768, timeScale: 0 });
  });
  after(() => sim.close());

  // A split after the first message leaves a head of a few dozen tokens: the summary's header alone is longer.
  it('compact --adopt refuses a summary that grows the context, leaves the log byte-identical, and --adopt-anyway adopts it', async () => {
    const { log } = await exampleLog();
    const before = readFileSync(log);
    const text = await cli('compact', '--session', log, '--endpoint', sim.url, '--split', '3', '--adopt');
    assert.equal(text.status, 1, text.stderr);
    assert.match(text.stdout, /^! the summary \(\d+ tokens\) is not smaller than the \d+ tokens it would replace/m);
    assert.match(text.stdout, /^Not adopted: it would grow the context \(pass --adopt-anyway/m);
    assert.match(text.stderr, /splitpoint compact: not adopted: .*--adopt-anyway/);
    assert.deepEqual(readFileSync(log), before, 'the refused compaction wrote nothing');

    const json = await cli('compact', '--session', log, '--endpoint', sim.url, '--split', '3', '--adopt', '--json');
    assert.equal(json.status, 1, json.stderr);
    const out = JSON.parse(json.stdout) as { adopted: boolean; adoptRefused?: string; checks: { grows: boolean } };
    assert.equal(out.checks.grows, true);
    assert.equal(out.adopted, false);
    assert.match(out.adoptRefused ?? '', /not smaller than/);
    assert.deepEqual(readFileSync(log), before);

    // Without --adopt nothing is refused: the warning is printed and the command succeeds.
    const look = await cli('compact', '--session', log, '--endpoint', sim.url, '--split', '3');
    assert.equal(look.status, 0, look.stderr);
    assert.match(look.stdout, /^! the summary .* adopting it grows the context$/m);

    const anyway = await cli('compact', '--session', log, '--endpoint', sim.url, '--split', '3', '--adopt-anyway', '--json');
    assert.equal(anyway.status, 0, anyway.stderr);
    assert.equal((JSON.parse(anyway.stdout) as { adopted: boolean }).adopted, true);
    assert.equal(events(log).filter((e) => e.type === 'compaction').length, 1);
  });

  // The diff review: refused on a messages array, the log it was imported into stayed, and the message did not say so;
  // running again on the .json then stopped at "already exists".
  it('refused on a messages array, it names the log the array was imported into, unchanged, to go on with', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-review-'));
    const json = join(dir, 'example.json');
    writeFileSync(json, readFileSync(example));
    const r = await cli('compact', '--session', json, '--endpoint', sim.url, '--split', '3', '--adopt');
    assert.equal(r.status, 1, r.stderr);
    const log = join(dir, 'example.jsonl');
    assert.ok(
      r.stderr.includes(`not adopted: `) && r.stderr.includes(`was imported into ${log}, unchanged: run compact on that log to go on`),
      r.stderr,
    );
    assert.equal(events(log).filter((e) => e.type === 'compaction').length, 0, 'nothing adopted in the import');
    const anyway = await cli('compact', '--session', log, '--endpoint', sim.url, '--split', '3', '--adopt-anyway');
    assert.equal(anyway.status, 0, anyway.stderr);
  });

  // compact splits with the CLI's reply reserve (4,096, at most half the window); inspect must show that split.
  for (const window of ['4096', undefined]) {
    it(`inspect and compact choose the same split point for every strategy at ${window ? `--window ${window}` : 'the default window'}`, async () => {
      const w = window ? ['--window', window] : [];
      const inspected = JSON.parse((await cli('inspect', '--session', example, '--json', ...w)).stdout) as {
        strategies: Record<string, { tailStartIndex: number; keptIndices: number[]; headMessages: number }>;
      };
      for (const strategy of ['token-fraction', 'user-messages', 'recent-turns']) {
        const r = await cli('compact', '--session', example, '--endpoint', sim.url, '--strategy', strategy, '--json', ...w);
        assert.equal(r.status, 0, r.stderr);
        const c = JSON.parse(r.stdout) as { tailStartIndex: number; keptIndices: number[] };
        const s = inspected.strategies[strategy]!;
        assert.deepEqual(
          { tailStartIndex: s.tailStartIndex, keptIndices: s.keptIndices },
          { tailStartIndex: c.tailStartIndex, keptIndices: c.keptIndices },
          strategy,
        );
      }
    });
  }

  it('run states a trigger as a fraction of the prompt room, and after an adoption names the command that shows the summary', async () => {
    const { dir, log } = await exampleLog();
    const ws = join(dir, 'ws');
    mkdirSync(ws);
    // 17k tokens in a 20,480-token window: past --block (95%) of the room, 16,384 tokens, though 84% of the window.
    const r = await cli(
      'run',
      '--endpoint',
      sim.url,
      '--window',
      '20480',
      '--workspace',
      ws,
      '--session',
      log,
      '--task',
      'Go on.',
      '--yes',
    );
    assert.equal(r.status, 0, r.stderr);
    const m =
      /\[compaction trigger: block at (\d+)% of the prompt's room \(the 20480-token window less 4096 for the reply; (\d+)% of the window\)\]/.exec(
        r.stderr,
      );
    assert.ok(m, r.stderr);
    const [room, window] = [Number(m[1]), Number(m[2])];
    assert.ok(room >= 95, `the block threshold is 95% of the room: ${room}%`);
    assert.ok(Math.abs((room * 16_384) / 20_480 - window) <= 1, `${room}% of the room is ${window}% of the window`);
    assert.match(r.stderr, /\[compaction adopted: \d+ → \d+ tokens\]\n {2}the summary: splitpoint inspect --session \S+ --summary\n/);
    assert.ok(r.stderr.includes(`splitpoint inspect --session ${log} --summary`));

    // The command it names prints the summary in force, as the log has it.
    const compaction = events(log).find((e) => e.type === 'compaction')!.compaction!;
    const shown = await cli('inspect', '--session', log, '--summary');
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /^Summary in force: message 1 above, \d+ tokens, from compaction \S+ \(depth 1, 1 compaction in force; token-fraction/m,
    );
    assert.match(shown.stdout, /^It replaces \d+ messages of the log: 1–\d+ /m);
    assert.ok(shown.stdout.endsWith(`${compaction.summary.content}\n`));
    const json = JSON.parse((await cli('inspect', '--session', log, '--summary', '--json')).stdout) as {
      messages: { kind: string }[];
      summary: { index: number; depth: number; text: string; replaced: { count: number; ids: string[] } };
    };
    assert.equal(json.summary.text, compaction.summary.content);
    assert.equal(json.summary.depth, 1);
    assert.equal(json.messages[json.summary.index]!.kind, 'summary');
    assert.equal(json.summary.replaced.ids.length, json.summary.replaced.count);
    // Without --summary the text table points to it; a session with nothing compacted says so.
    assert.match((await cli('inspect', '--session', log)).stdout, /Message 1 is the summary in force \(depth 1\); --summary prints/);
    assert.match((await cli('inspect', '--session', example, '--summary')).stdout, /No summary is in force/);
    assert.equal(JSON.parse((await cli('inspect', '--session', example, '--summary', '--json')).stdout).summary, null);
  });

  it('compact against a server that is gone prints the connection failure once, then counts, not once per block', async () => {
    const dead = `http://127.0.0.1:${await freePort()}/v1`;
    // --window and --ignore-load: nothing is asked of the server before the workers are sent.
    const r = await cli('compact', '--session', example, '--endpoint', dead, '--window', '32768', '--ignore-load', '--block-tokens', '512');
    assert.equal(r.status, 1);
    const blocks = Number(/compacting \d+ tokens in (\d+) block/.exec(r.stderr)?.[1]);
    assert.ok(blocks > 4, r.stderr);
    const progress = r.stderr.split('\n').filter((l) => !l.startsWith('splitpoint compact:'));
    assert.equal(progress.filter((l) => l.includes('Cannot connect')).length, 1, r.stderr);
    assert.ok(progress.includes(`  ${blocks - 1} more blocks failed with an error printed above`), r.stderr);
    // Every block found nothing listening: a second round is not sent.
    assert.ok(progress.includes('every block found the server refusing connections: not retried'), r.stderr);
    assert.ok(!progress.some((l) => l.startsWith('retrying')), r.stderr);
    assert.equal(progress.filter((l) => /retry \d/.test(l)).length, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`splitpoint compact: ${blocks} of ${blocks} blocks failed .*Nothing was adopted\\.`));
  });
});
