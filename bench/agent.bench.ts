/**
 * Agent benchmark (issue 5): a scripted 40-step session against the
 * simulator's h100-7b step model (time scale 1), run twice: with asynchronous
 * compaction (background at hi, judged) and with synchronous compaction only
 * (at block). Reports the time the agent spent blocked on compaction.
 * Target: async waits 0 s whenever compaction finishes before `block`.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentLoop } from '../src/core/agent/agentLoop';
import type { AgentEvent } from '../src/core/agent/events';
import { recallTool } from '../src/core/agent/recall';
import { agentSystemPrompt } from '../src/core/agent/systemPrompt';
import { autoApprove, ToolRegistry } from '../src/core/agent/tools';
import { DEFAULT_COMPACTION_SETTINGS } from '../src/core/compaction/plan';
import { SessionStore } from '../src/core/session/sessionStore';
import { randomIds, systemClock } from '../src/core/session/storage';
import { loadTiktokenCounter } from '../src/core/tokens/tiktokenCounter';
import { TokenLedger } from '../src/core/tokens/tokenLedger';
import { Semaphore, VllmClient } from '../src/llm';
import { NodeFileStorage } from '../src/node/fileStorage';
import { nodeWorkspaceTools } from '../src/node/tools';
import { startSimulator } from '../test/sim';

const WINDOW = 16_384;
const STEPS = 40;

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sp-agent-bench-'));
  mkdirSync(join(dir, 'src'));
  for (let i = 0; i < STEPS; i++) {
    const body = Array.from(
      { length: 14 },
      (_, k) =>
        `export function step${i}_${k}(input: string): number {\n  return input.length * ${k + 1} + ${i}; // ticket T-${1000 + i}\n}`,
    ).join('\n');
    writeFileSync(join(dir, 'src', `step${i}.ts`), `// src/step${i}.ts\n${body}\n`);
  }
  return dir;
}

async function runOnce(asyncCompaction: boolean, judge: boolean, replyWords: number): Promise<string> {
  const sim = await startSimulator({ maxModelLen: WINDOW, timeScale: 1, summaryTokens: 400 });
  try {
    sim.setScript([
      ...Array.from({ length: STEPS }, (_, i) => ({
        content: `Step ${i}: reading src/step${i}.ts. ${thinking(replyWords, i)}`,
        tool_calls: [{ name: 'read_file', arguments: { path: `src/step${i}.ts` } }],
      })),
      { content: 'Finished all steps.' },
    ]);
    // A judge that accepts: this benchmark measures waiting, not judging quality.
    sim.queueJudgeVerdicts(Array.from({ length: 20 }, () => ({ alignment: 9, non_contradiction: 9, diagnosis: 'ok' })));
    const dir = workspace();
    const store = await SessionStore.create({ storage: new NodeFileStorage() }, join(dir, '.session.jsonl'));
    await store.append({ role: 'system', content: agentSystemPrompt('bench') });
    const ledger = new TokenLedger(await loadTiktokenCounter());
    const client = new VllmClient({ baseURL: sim.url });
    const loop = new AgentLoop(
      {
        store,
        ledger,
        model: client,
        compactor: client,
        compactorLimiter: new Semaphore(8),
        judge: client,
        tools: new ToolRegistry([...nodeWorkspaceTools(dir), recallTool(() => store.archived())]),
        approvals: autoApprove,
        clock: systemClock,
        ids: randomIds,
      },
      {
        contextWindow: WINDOW,
        replyReserve: 512,
        thresholds: { hi: 0.75, lo: 0.4, block: 0.95 },
        strategy: 'token-fraction',
        compaction: { ...DEFAULT_COMPACTION_SETTINGS, contextWindow: WINDOW, blockTokens: 4096 },
        asyncCompaction,
        judge: { enabled: judge, threshold: 7 },
        maxSteps: STEPS + 5,
        idle: { idleMs: 600_000, minFraction: 0.5 },
      },
    );
    const events: AgentEvent[] = [];
    loop.on((e) => events.push(e));
    const t0 = performance.now();
    const outcome = await loop.send('Go through every step file in order.', new AbortController().signal);
    const wall = performance.now() - t0;
    await loop.settle();
    const count = (t: AgentEvent['type']) => events.filter((e) => e.type === t).length;
    const bg = events.filter((e) => e.type === 'compaction-started' && e.background).length;
    const sync = events.filter((e) => e.type === 'compaction-started' && !e.background).length;
    const maxUsed = Math.max(
      ...events
        .filter((e): e is Extract<AgentEvent, { type: 'step-started' }> => e.type === 'step-started')
        .map((e) => e.contextTokens / e.window),
    );
    return [
      `${asyncCompaction ? (judge ? 'async + judge' : 'async, no judge') : 'synchronous  '}: ${outcome.reason} after ${outcome.steps} steps in ${(wall / 1000).toFixed(1)} s;`,
      `waited on compaction ${(loop.compactionWaitMs / 1000).toFixed(2)} s;`,
      `compactions: ${bg} background, ${sync} synchronous, ${count('compaction-adopted')} adopted, ${count('waiting-for-compaction')} block waits;`,
      `peak context ${(100 * maxUsed).toFixed(0)}% of ${WINDOW}`,
    ].join(' ');
  } finally {
    await sim.close();
  }
}

/** Reasoning text of about `words` words, so a step costs what a real agent's step costs to decode. */
function thinking(words: number, i: number): string {
  const w = ['check', 'the', 'handler', 'returns', 'length', 'times', 'factor', 'plus', 'offset', 'ticket', 'matches', 'step'];
  return Array.from({ length: words }, (_, k) => w[(k * 7 + i) % w.length]).join(' ');
}

async function main(): Promise<void> {
  console.log(`# agent benchmark — ${new Date().toISOString()} — node ${process.version}`);
  console.log(
    `scripted ${STEPS}-step session (one read_file per step, ~600-token results), window ${WINDOW}, hi/lo/block 0.75/0.4/0.95, simulator profile h100-7b (vLLM-v1 step scheduler) at time scale 1\n`,
  );
  for (const words of [120, 4]) {
    console.log(`## agent replies of about ${words} words per step`);
    console.log(await runOnce(true, true, words));
    console.log(await runOnce(true, false, words));
    console.log(await runOnce(false, false, words));
    console.log('');
  }
}

void main();
