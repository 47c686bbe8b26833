/**
 * Client CPU with streamed compaction workers (issue 12, part 6; target:
 * ≤ 2 % of wall). Runs the long session's parallel compaction (cache-aligned
 * and target-block, cold cache) against the simulator on the h100-7b
 * profile at time scale 1 (simulated time is real time, so chunk rates are
 * a real server's: one token per worker per 6–40 ms step), in a separate
 * process so its CPU is not ours, and prints process.cpuUsage() over wall
 * time for each transport:
 *   fetch   Node's fetch (undici), one read per SSE event (the old default)
 *   http    node:http, read as data arrives (pacedFetch, interval 0)
 *   paced   node:http, read in batches every 100 ms (the default now)
 *   none    non-streaming workers: the floor (prompt building, counting, planning)
 * The CPU figure is the whole compaction's, as `splitpoint bench` reports it.
 *
 * Run: npm run bench -- clientCpu
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { runBench, parseRuns, type RunResult } from '../src/cli/benchCommand';
import { VllmClient, limiterFor } from '../src/llm';
import { createPacedFetch } from '../src/llm/pacedFetch';

const SESSION = 'test/fixtures/long-session.json';
const WINDOW = 131_072;
const LAYOUTS = ['cache-aligned', 'target-block'] as const;
const TRANSPORTS = ['fetch', 'http', 'paced', 'none'] as const;
type Transport = (typeof TRANSPORTS)[number];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function startSim(port: number) {
  const args = ['dist/cli.js', 'sim', '--port', String(port), '--profile', 'h100-7b', '--time-scale', '1', '--max-model-len', String(WINDOW), '--quiet'];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}/v1`;
  for (let i = 0; i < 100; i++) {
    if (await fetch(`${url}/models`).then((r) => r.ok, () => false)) return { url, close: () => child.kill() };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('the simulator did not start');
}

async function measure(url: string, layout: string, transport: Transport): Promise<RunResult> {
  const paced = transport === 'http' || transport === 'paced' ? createPacedFetch({ intervalMs: transport === 'paced' ? 100 : 0 }) : undefined;
  const client = new VllmClient({ baseURL: url, fetch: paced ?? globalThis.fetch.bind(globalThis) });
  const endpoint = { client, limiter: limiterFor(url, 8), contextWindow: WINDOW, model: undefined };
  const runs = parseRuns(`parallel/${layout}/cold${transport === 'none' ? '/nostream' : ''}`);
  const quietIO = { out: () => undefined, err: () => undefined };
  try {
    const r = await runBench({ path: SESSION, blockTokens: 0, strategy: 'token-fraction', runs, endpoint, io: quietIO, quiet: true });
    return r.runs[0]!;
  } finally {
    paced?.close();
  }
}

async function main(): Promise<void> {
  const sim = await startSim(await freePort());
  const results: Array<{ layout: string; transport: Transport; r: RunResult }> = [];
  try {
    // One warm-up run so module loading and JIT do not land on the first row.
    await measure(sim.url, 'target-block', 'none');
    for (const layout of LAYOUTS) {
      for (const transport of TRANSPORTS) results.push({ layout, transport, r: await measure(sim.url, layout, transport) });
    }
  } finally {
    sim.close();
  }
  const lines = [
    `client CPU, ${SESSION}, parallel compaction, cold cache, simulator h100-7b at time scale 1 (separate process), node ${process.version}`,
    '',
    'layout         transport  blocks   wall ms  client CPU ms  share of wall  over non-streaming',
  ];
  for (const { layout, transport, r } of results) {
    const floor = results.find((x) => x.layout === layout && x.transport === 'none')!.r;
    const extra = transport === 'none' ? '' : `${r.clientCpuMs - floor.clientCpuMs} ms (${((100 * (r.clientCpuMs - floor.clientCpuMs)) / r.wallMs).toFixed(2)} %)`;
    lines.push(
      `${layout.padEnd(15)}${transport.padEnd(11)}${String(r.blocks).padStart(6)}${String(r.wallMs).padStart(10)}${String(r.clientCpuMs).padStart(15)}` +
        `${(100 * r.clientCpuShare).toFixed(2).padStart(13)} %  ${extra}`,
    );
  }
  const paced = results.filter((x) => x.transport === 'paced');
  const worst = Math.max(...paced.map((x) => x.r.clientCpuShare));
  lines.push('', `target: client CPU ≤ 2 % of wall with streamed workers (paced, the default): worst ${(100 * worst).toFixed(2)} % — ${worst <= 0.02 ? 'meets' : 'MISSES'}`);
  console.log(lines.join('\n'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
