import { spawn } from 'node:child_process';
import { runBench, parseRuns } from '../src/cli/benchCommand';
import { VllmClient, limiterFor } from '../src/llm';
import { createPacedFetch } from '../src/llm/pacedFetch';
import { freePort } from '../test/sim';
async function measure(url: string) {
  const paced = createPacedFetch({ intervalMs: 100 });
  const client = new VllmClient({ baseURL: url, model: 'sim-model', fetch: paced });
  const endpoint = { client, limiter: limiterFor(url, 8), contextWindow: 131072, model: undefined };
  const r = await runBench({ path: 'test/fixtures/long-session.json', blockTokens: 0, strategy: 'token-fraction', runs: parseRuns('parallel/target-block/cold'), endpoint, io: { out: () => undefined, err: () => undefined }, quiet: true });
  paced.close();
  return r.runs[0]!;
}
async function main() {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import=tsx', 'bench/clientCpu.bench.ts', 'sim', String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}/v1`;
  for (let i = 0; i < 200; i++) { if (await fetch(`${url}/models`).then((r) => r.ok, () => false)) break; await new Promise((r) => setTimeout(r, 100)); }
  for (let i = 0; i < Number(process.env.N ?? 10); i++) { console.log(`=== RUN ${i}`); const r = await measure(url); console.log(`=== END ${i} cpu ${r.clientCpuMs} main ${r.clientMainThreadCpuMs} wall ${r.wallMs}`); }
  child.kill();
}
main();
