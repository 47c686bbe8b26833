import assert from 'node:assert/strict';
import type { ChatMessage } from '../../src/core/messages';
import { createCompaction, snapshotSession } from '../../src/core/compaction/fromSession';
import type { CompactionDeps } from '../../src/core/compaction/pendingCompaction';
import type { CompactionEvent } from '../../src/core/compaction/events';
import { DEFAULT_COMPACTION_SETTINGS } from '../../src/core/compaction/plan';
import { totalsOf } from '../../src/core/compaction/compactionOutput';
import type { CompactionSettings } from '../../src/core/compaction/plan';
import { UNIT_PROFILE } from '../../src/core/perf/profile';
import { SessionStore } from '../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../src/core/tokens/tokenLedger';
import { unlimited } from '../../src/core/ports';
import type { ModelRequest, ModelResult, ToolSpec } from '../../src/core/ports';
import { FakeModel } from './helpers/fakeModel';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

const counter = new CharEstimateCounter();
const count = (m: ChatMessage) => counter.countMessage(m);
const TOOLS: ToolSpec[] = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
const ids = counterIds();

async function snapshot(turns = 12) {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
  await store.append({ role: 'system', content: 'You are a coding agent.' });
  for (let t = 0; t < turns; t++) {
    await store.append({ role: 'user', content: `Turn ${t}: fix bug ${t} in src/mod${t}.ts.` });
    await store.append({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/mod${t}.ts"}` } }],
    });
    await store.append({ role: 'tool', tool_call_id: `c${t}`, content: `// src/mod${t}.ts\n` + 'x'.repeat(6000) });
    await store.append({ role: 'assistant', content: `Patched parseHeader in src/mod${t}.ts.` });
  }
  return snapshotSession(store, new TokenLedger(counter), { strategy: 'recent-turns' }, TOOLS, {
    contextWindow: 200_000,
    replyReserve: 4096,
  });
}

const settings = (over: Partial<CompactionSettings> = {}): CompactionSettings => ({
  ...DEFAULT_COMPACTION_SETTINGS,
  contextWindow: 200_000,
  profile: UNIT_PROFILE,
  ...over,
});
const deps = (model: FakeModel, extra: Partial<CompactionDeps> = {}): CompactionDeps => ({
  model,
  limiter: unlimited,
  count,
  clock: fixedClock(),
  ids,
  ...extra,
});

describe('compaction runs the plan', () => {
  it("by default runs the planner's choice: its blocks, targets, max_tokens and order, and reports plan and outcome", async () => {
    const snap = await snapshot();
    const model = new FakeModel();
    const pc = createCompaction(snap, settings(), deps(model));
    const choice = pc.plan.choice!;
    assert.ok(choice, 'a plan was made');
    assert.equal(pc.plan.settings.mode, choice.chosen.mode);
    assert.equal(pc.plan.settings.layout, choice.chosen.layout);
    assert.equal(pc.plan.blocks.length, choice.chosen.blocks);
    assert.ok(choice.alternatives.length >= 3);
    assert.equal(
      pc.plan.workers.targets.reduce((a, b) => a + b, 0),
      pc.plan.summaryTokens,
    );
    const events: CompactionEvent[] = [];
    pc.on((e) => events.push(e));
    await pc.start();
    const planned = events[0] as Extract<CompactionEvent, { type: 'planned' }>;
    assert.deepEqual(planned.plan, choice);
    // Every worker asks for its share of the volume and is bounded by its max_tokens.
    for (const req of model.requests) {
      const last = req.messages.at(-1)!.content ?? '';
      const target = Number(/^TARGET_TOKENS: (\d+)/m.exec(last)![1]);
      const k = pc.plan.workers.targets.indexOf(target);
      assert.ok(k >= 0, `target ${target} is one of the plan's`);
      assert.equal(req.maxTokens, pc.plan.workers.maxTokens[k]);
      assert.match(last, new RegExp(`Write between ${Math.round(0.8 * target)} and ${Math.round(1.1 * target)} tokens`));
    }
    const ready = events.at(-1) as Extract<CompactionEvent, { type: 'ready' }>;
    assert.equal(ready.outcome!.predictedMs, choice.chosen.predictedMs);
    // What the merge adds to the blocks (header, part headings) is said at the start, so the view can project the
    // context before the summaries are written: the merged summary is the blocks' texts plus about that.
    const blockTexts = pc.blocks.reduce((n, b) => n + counter.countText(b.summary ?? ''), 0);
    const merged = ready.totals.summaryTokens;
    assert.ok(planned.headingTokens > 20, `headings ${planned.headingTokens}`);
    assert.ok(
      Math.abs(merged - blockTexts - planned.headingTokens) <= pc.blocks.length + 1,
      `${merged} = ${blockTexts} + ${planned.headingTokens}`,
    );
    assert.equal(ready.outcome!.measuredMs, ready.totals.wallMs);
  });

  it('measured time is the planned run; a block regenerated minutes later adds its own run, not the wait', async () => {
    const snap = await snapshot();
    const clock = fixedClock();
    const model = new FakeModel();
    const chat = model.chat.bind(model);
    // Each worker takes 1 s of this clock.
    model.chat = async (req, opts) => {
      const r = await chat(req, opts);
      clock.advance(1000);
      return r;
    };
    const pc = createCompaction(snap, settings(), deps(model, { clock }));
    const readies: Extract<CompactionEvent, { type: 'ready' }>[] = [];
    pc.on((e) => e.type === 'ready' && readies.push(e));
    await pc.start();
    const first = readies[0]!;
    const runMs = first.totals.wallMs;
    assert.equal(runMs, 1000 * pc.blocks.length, 'fixture: the workers ran one after another on this clock');
    assert.equal(first.outcome!.measuredMs, runMs);
    clock.advance(5 * 60_000);
    await pc.regenerate(0);
    const again = readies.at(-1)!;
    assert.equal(readies.length, 2);
    assert.equal(again.totals.wallMs, runMs + 1000, 'the regeneration adds its 1 s, not the 5 min before it');
    assert.equal(again.outcome!.measuredMs, runMs, 'the prediction is compared with the run it predicted');
    clock.advance(60_000);
    pc.edit(1, 'DECISIONS:\n- by hand');
    assert.equal(readies.at(-1)!.totals.wallMs, runMs + 1000, 'an edit is not compaction time');
  });

  it("a failed block's retry is part of the measured run; an edit that completes the set reports the run too", async () => {
    const snap = await snapshot();
    const clock = fixedClock();
    const model = new FakeModel();
    const chat = model.chat.bind(model);
    let calls = 0;
    model.chat = async (req, opts) => {
      clock.advance(1000);
      if (++calls === 1) throw new Error('server error 500');
      return chat(req, opts);
    };
    const pc = createCompaction(snap, settings(), deps(model, { clock }));
    const readies: Extract<CompactionEvent, { type: 'ready' }>[] = [];
    pc.on((e) => e.type === 'ready' && readies.push(e));
    await pc.start();
    assert.equal(readies.length, 0, 'one block failed');
    clock.advance(30_000);
    await pc.retryFailed();
    const n = pc.blocks.length;
    assert.equal(readies[0]!.outcome!.measuredMs, 1000 * (n + 1), 'every worker run, the failed one and its retry, not the wait');
    clock.advance(60_000);
    pc.edit(0, 'DECISIONS:\n- by hand');
    assert.equal(readies.at(-1)!.outcome!.measuredMs, 1000 * (n + 1), "the edit's ready carries the same measured run");
  });

  it("cached tokens: a server's silence is 0 once it reported for another worker, unknown when it never did", async () => {
    const pc = createCompaction(await snapshot(), settings(), deps(new FakeModel()));
    const view = (cachedTokens: number | undefined, endpoint = 0, usageReported = true) => ({
      ...pc.blocks[0]!,
      stats: {
        inputTokens: 100,
        outputTokens: 10,
        cachedTokens,
        endpoint,
        usageReported,
        ms: 5,
        queuedMs: 0,
        instructionTokens: 50,
        attempts: 1,
        trimmed: false,
      },
    });
    const o = { summaryTokens: 20, wallMs: 10, requests: 2, maxInFlight: 2 };
    assert.equal(totalsOf(pc.plan, [view(60), view(40)], o).cachedTokens, 100);
    // vLLM's 2025 releases leave the details out of a reply with nothing cached: the first cold workers.
    assert.equal(totalsOf(pc.plan, [view(undefined), view(undefined), view(40)], o).cachedTokens, 40, 'the cold ones served nothing');
    assert.equal(
      totalsOf(pc.plan, [view(60, 0), view(undefined, 1)], o).cachedTokens,
      undefined,
      'a replica that never said: the sum would be a part',
    );
    assert.equal(totalsOf(pc.plan, [view(60, 0), view(undefined, 1), view(5, 1)], o).cachedTokens, 65, 'each replica on its own');
    assert.equal(totalsOf(pc.plan, [view(undefined), view(undefined)], o).cachedTokens, undefined, 'a server that never reports');
    assert.equal(
      totalsOf(pc.plan, [view(undefined, 0, false), view(40)], o).cachedTokens,
      undefined,
      'a reply without usage (the stream ended before it) says nothing of its cache',
    );
  });

  it('the worker reports whether its reply carried usage: without usage the total stays unknown, without the count it is 0', async () => {
    /** FakeModel with the first request's usage replaced. */
    class FirstUsage extends FakeModel {
      constructor(private readonly first: ModelResult['usage']) {
        super();
      }
      override async chat(req: ModelRequest, opts?: Parameters<FakeModel['chat']>[1]): Promise<ModelResult> {
        const r = await super.chat(req, opts);
        return this.requests.indexOf(req) === 0 ? { ...r, usage: this.first } : r;
      }
    }
    const totalFor = async (first: ModelResult['usage']) => {
      const pc = createCompaction(await snapshot(), settings(), deps(new FirstUsage(first)));
      await pc.start();
      assert.ok(pc.blocks.length > 1 && pc.isComplete());
      return { cached: pc.totals().cachedTokens, others: pc.blocks.length - 1 };
    };
    const noUsage = await totalFor(undefined);
    assert.equal(noUsage.cached, undefined, 'a reply without usage says nothing of its cache');
    const noCount = await totalFor({ promptTokens: 500, completionTokens: 20, cachedTokens: undefined });
    assert.equal(noCount.cached, 900 * noCount.others, 'usage without the count, beside workers that had one: 0 for that worker');
  });

  it('settings still force the layout and block size; the prediction is for what runs', async () => {
    const snap = await snapshot();
    const pc = createCompaction(snap, settings({ layout: 'cache-aligned', blockTokens: 3000, mode: 'parallel' }), deps(new FakeModel()));
    assert.equal(pc.plan.settings.layout, 'cache-aligned');
    assert.equal(pc.plan.settings.blockTokens, 3000);
    assert.deepEqual(pc.plan.choice!.forced, ['mode=parallel', 'layout=cache-aligned', 'blockTokens=3000']);
    for (const a of pc.plan.choice!.alternatives) assert.equal(a.layout, 'cache-aligned');
  });

  it('holds in-flight workers to the planned concurrency', async () => {
    const snap = await snapshot();
    const model = new FakeModel();
    model.hold();
    const pc = createCompaction(
      snap,
      settings({ mode: 'parallel', layout: 'target-block', blockTokens: 1500, concurrency: 2 }),
      deps(model),
    );
    assert.ok(pc.plan.blocks.length > 2);
    const done = pc.start();
    await new Promise((r) => setImmediate(r));
    assert.equal(model.inFlight, 2);
    model.release();
    await done;
    assert.equal(model.maxInFlight, 2);
    assert.ok(pc.isComplete());
  });

  it("spreads target-block workers over replicas; cache-aligned ones stay on the agent's endpoint", async () => {
    const snap = await snapshot();
    for (const layout of ['target-block', 'cache-aligned'] as const) {
      const a = new FakeModel();
      const b = new FakeModel();
      a.hold();
      b.hold();
      const pc = createCompaction(
        snap,
        settings({ mode: 'parallel', layout, blockTokens: 1500, concurrency: 64 }),
        deps(a, { replicas: [{ model: b, limiter: unlimited }] }),
      );
      assert.equal(pc.plan.choice!.replicas, 2);
      const done = pc.start();
      await new Promise((r) => setImmediate(r));
      a.release();
      b.release();
      await done;
      const n = pc.plan.blocks.length;
      if (layout === 'target-block') {
        assert.equal(a.requests.length, Math.ceil(n / 2));
        assert.equal(b.requests.length, Math.floor(n / 2));
      } else {
        assert.equal(a.requests.length, n);
        assert.equal(b.requests.length, 0);
      }
    }
  });
});
