import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../sim';
import type { SimHandle } from '../sim';

const root = join(__dirname, '..', '..');
const example = join(root, 'test', 'fixtures', 'example-session.json');

/** The built CLI, asynchronously (the simulator serves from this process's event loop). */
function cli(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(root, 'dist', 'cli.js'), ...args], { maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('the newcomer path (built CLI)', function () {
  this.timeout(60_000);
  let sim: SimHandle;
  before(async () => {
    assert.ok(existsSync(join(root, 'dist', 'cli.js')), 'dist/cli.js is missing: run "node esbuild.mjs" first');
    sim = await startSimulator({ maxModelLen: 200_000, timeScale: 0 });
  });
  after(() => sim.close());

  it('--help shows every command with its whole summary, wrapped to 80 columns when not on a terminal', async () => {
    const r = await cli('--help');
    assert.equal(r.status, 0, r.stderr);
    for (const name of ['inspect', 'import', 'compact', 'bench', 'run', 'sim'])
      assert.match(r.stdout, new RegExp(`^  ${name} `, 'm'), name);
    // The compact summary's second sentence used to be cut off after "With".
    assert.match(r.stdout.replace(/\s+/g, ' '), /With --adopt the compaction is written to the session log;/);
    for (const line of r.stdout.split('\n')) assert.ok(line.length <= 80, `too wide: ${line}`);
    assert.match(r.stdout, /example-session\.json/);
  });

  it('--version prints the package version', async () => {
    const r = await cli('--version');
    assert.equal(r.status, 0);
    assert.equal(r.stdout.trim(), JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
  });

  it('import turns a messages array into a session log, and refuses to overwrite or to re-import a log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-import-'));
    const src = join(dir, 'chat.json');
    copyFileSync(example, src);
    const r = await cli('import', src, '--json');
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    const raw = JSON.parse(readFileSync(example, 'utf8')) as unknown[];
    assert.equal(out.log, join(dir, 'chat.jsonl'));
    assert.equal(out.messages, raw.length);
    const lines = readFileSync(out.log, 'utf8').trimEnd().split('\n');
    assert.equal(JSON.parse(lines[0]!).type, 'session');
    assert.equal(JSON.parse(lines[0]!).title, 'chat');
    assert.equal(lines.length, raw.length + 1);
    assert.equal(readFileSync(src, 'utf8'), readFileSync(example, 'utf8'), 'the source is left as it was');

    const again = await cli('import', src);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /already exists; pass --out/);
    const ofLog = await cli('import', out.log, '--out', join(dir, 'other.jsonl'));
    assert.equal(ofLog.status, 1);
    assert.match(ofLog.stderr, /already a Splitpoint session log/);
    writeFileSync(join(dir, 'bad.json'), '[{"role": "user",');
    const bad = await cli('import', join(dir, 'bad.json'));
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /not valid JSON .*expected an OpenAI messages array/);
    const none = await cli('import');
    assert.equal(none.status, 2);
    assert.match(none.stderr, /name the messages file to import/);
  });

  it('compact --adopt accepts a messages array: it is imported into FILE.jsonl and the compaction lands there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-adopt-'));
    const src = join(dir, 'example.json');
    copyFileSync(example, src);
    const r = await cli('compact', '--session', src, '--endpoint', sim.url, '--adopt', '--json');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).adopted, true);
    assert.match(r.stderr, /imported .*example\.json into .*example\.jsonl/);
    const events = readFileSync(join(dir, 'example.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    assert.equal(events.filter((e) => e.type === 'compaction').length, 1);
    assert.equal(readFileSync(src, 'utf8'), readFileSync(example, 'utf8'));
  });

  it('undo peels the compactions compact --adopt made off a log one at a time, or all at once, and says what is left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-undo-'));
    const src = join(dir, 'example.json');
    copyFileSync(example, src);
    const log = join(dir, 'example.jsonl');
    for (let k = 0; k < 2; k++) {
      const r = await cli('compact', '--session', k === 0 ? src : log, '--endpoint', sim.url, '--adopt');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`splitpoint undo --session ${log.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} undoes it`));
    }
    const inspect = async () => JSON.parse((await cli('inspect', '--session', log, '--json')).stdout) as { totalTokens: number };
    const compacted = (await inspect()).totalTokens;
    const one = await cli('undo', '--session', log, '--json');
    assert.equal(one.status, 0, one.stderr);
    const first = JSON.parse(one.stdout) as { undone: string[]; tokensBefore: number; tokensAfter: number; compactionsInForce: number };
    assert.equal(first.undone.length, 1);
    assert.equal(first.tokensBefore, compacted);
    assert.equal(first.compactionsInForce, 1);
    assert.equal((await inspect()).totalTokens, first.tokensAfter, 'the log on disk is what undo reported');
    const all = await cli('undo', '--session', log, '--all');
    assert.equal(all.status, 0, all.stderr);
    assert.match(
      all.stdout,
      /^Undid compaction \S+: the context is [\d,]+ → [\d,]+ tokens \(local estimate\)\.\nNo compaction is in force now\.\n?$/,
    );
    const original = JSON.parse((await cli('inspect', '--session', src, '--json')).stdout) as { totalTokens: number };
    assert.equal((await inspect()).totalTokens, original.totalTokens, 'every summarised message is back');
    const none = await cli('undo', '--session', log);
    assert.equal(none.status, 1);
    assert.match(none.stderr, /has no compaction in force: there is nothing to undo/);
    const array = await cli('undo', '--session', src);
    assert.equal(array.status, 1);
    assert.match(array.stderr, /is not a Splitpoint session log, so it has no compaction to undo/);
    assert.equal(readFileSync(src, 'utf8'), readFileSync(example, 'utf8'));
  });

  // vLLM without --enable-prompt-tokens-details reports no cached tokens, and a server may have no /tokenize: the
  // outputs say what is not known instead of printing 0 or calling an estimate the server's count.
  it('bench and compact say what the server did not report: the head count and the cached tokens', async () => {
    const bare = await startSimulator({ maxModelLen: 200_000, timeScale: 0, tokenizeRoute: false, promptTokensDetails: false });
    try {
      const bench = async (url: string, run = 'sequential/cache-aligned/cold') => {
        const r = await cli('bench', '--session', example, '--endpoint', url, '--runs', run, '--block-tokens', '512');
        assert.equal(r.status, 0, r.stderr);
        // Nothing else runs on these servers: each one's cache is reset before the run, after the runs before it.
        assert.doesNotMatch(r.stdout, /cache not reset/);
        const head = /^session .*: head \d+ messages, \d+ tokens \(([^)]+)\)/m.exec(r.stdout)?.[1];
        const row = r.stdout
          .split('\n')
          .find((l) => l.startsWith(run))!
          .trim()
          .split(/\s+/);
        return { head, cached: row.slice(6, 9) };
      };
      const full = await bench(sim.url);
      assert.equal(full.head, 'server count');
      assert.ok(
        full.cached.every((c) => /^[\d.]+$/.test(c)),
        `cached, uncached, prefill ratio: ${full.cached.join(' ')}`,
      );
      assert.deepEqual(await bench(bare.url), { head: 'local estimate', cached: ['—', '—', '—'] });
      // A server that leaves the count out when nothing was cached (vLLM's 2025 releases): the first, cold worker
      // has none, the ones after it reuse its prefix and say so, and the row adds them up.
      const nonzero = await startSimulator({ maxModelLen: 200_000, timeScale: 0, promptTokensDetails: 'nonzero' });
      try {
        const { cached } = await bench(nonzero.url, 'parallel/cache-aligned/cold');
        assert.ok(
          cached.every((c) => /^[\d.]+$/.test(c)),
          `cached, uncached, prefill ratio: ${cached.join(' ')}`,
        );
      } finally {
        await nonzero.close();
      }
      // So do compact's figures, though its client had seen no count when the first, cold worker came back.
      for (const json of [true, false]) {
        const cold = await startSimulator({ maxModelLen: 200_000, timeScale: 0, promptTokensDetails: 'nonzero' });
        try {
          const r = await cli(
            'compact',
            '--session',
            example,
            '--endpoint',
            cold.url,
            '--block-tokens',
            '512',
            ...(json ? ['--json'] : []),
          );
          assert.equal(r.status, 0, r.stderr);
          if (!json) {
            assert.match(r.stdout, /cached prompt tokens \d+ of \d+/);
            continue;
          }
          const blocks = (JSON.parse(r.stdout) as { blocks: { cachedTokens: number | null }[] }).blocks;
          assert.ok(blocks.length > 1 && blocks.every((b) => typeof b.cachedTokens === 'number'), JSON.stringify(blocks));
          assert.ok(
            blocks.some((b) => b.cachedTokens === 0),
            'the first cold worker served nothing from the cache',
          );
        } finally {
          await cold.close();
        }
      }
      const c = await cli('compact', '--session', example, '--endpoint', bare.url);
      assert.equal(c.status, 0, c.stderr);
      assert.match(c.stdout, /cached prompt tokens not reported by the server of \d+/);
    } finally {
      await bare.close();
    }
  });
});
