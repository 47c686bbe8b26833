/** Deterministic review-editor states: a head of realistic text (≈4 characters per token) split into blocks. */
import type { BlockView, CompactionView, ViewMessage } from '../../src/protocol/messages';
import type { ReviewState } from '../../src/protocol/review';
import { lossWithFallback } from '../../src/host/review/reviewBridge';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0), s / 2 ** 32);
}

const WORDS =
  'the migration keeps rows and adds a nullable column before the backfill runs in batches while reads continue against replicas'.split(
    ' ',
  );
const IDENTS = [
  'runMigration',
  'users_table',
  'backfillBatch',
  'MAX_BATCH_ROWS',
  'ReplicaLagGuard',
  'createdAt',
  'tenant_id',
  'onConflict',
];
const PATHS = ['src/db/migrate.ts', 'src/db/backfill.ts', 'test/db/migrate.test.ts', 'config/replicas.yaml'];

function text(r: () => number, chars: number, k: number): string {
  const out: string[] = [];
  let n = 0;
  let i = 0;
  while (n < chars) {
    const w =
      i % 23 === 7
        ? `${IDENTS[(k + i) % IDENTS.length]}${(k * 31 + i) % 97}`
        : i % 41 === 13
          ? PATHS[(k + i) % PATHS.length]!
          : i % 67 === 30
            ? 'TypeError'
            : WORDS[Math.floor(r() * WORDS.length)]!;
    out.push(w);
    n += w.length + 1;
    i++;
    if (i % 18 === 0) out.push('\n');
  }
  return out.join(' ');
}

export function makeReviewState(opts: { headTokens?: number; blocks?: number; seed?: number; done?: boolean } = {}): ReviewState {
  const headTokens = opts.headTokens ?? 12_000;
  const nBlocks = opts.blocks ?? 4;
  const r = rng(opts.seed ?? 3);
  const messages: ViewMessage[] = [];
  const push = (m: Omit<ViewMessage, 'index' | 'id' | 'truncated' | 'content' | 'kind' | 'origin'>, content: string) => {
    const index = messages.length;
    messages.push({ id: `m${index}`, index, truncated: false, kind: 'normal', origin: index === 0 ? 'system' : 'tail', content, ...m });
  };
  push({ role: 'system', tokens: 400 }, 'You are a careful coding agent.');
  let acc = 0;
  let k = 0;
  while (acc < headTokens) {
    const phase = k % 4;
    const tokens = phase === 0 ? 60 + Math.floor(r() * 120) : phase === 2 ? 300 + Math.floor(r() * 1500) : 80 + Math.floor(r() * 300);
    const role = phase === 0 ? 'user' : phase === 2 ? 'tool' : 'assistant';
    push(
      {
        role,
        tokens,
        ...(phase === 1
          ? { toolCalls: [{ id: `c${k}`, name: 'read_file', arguments: JSON.stringify({ path: PATHS[k % PATHS.length] }) }] }
          : {}),
        ...(phase === 2 ? { toolCallId: `c${k - 1}` } : {}),
      },
      text(r, tokens * 4, k),
    );
    acc += tokens;
    k++;
  }
  const headEnd = messages.length - 1;
  for (let t = 0; t < 6; t++) push({ role: t % 2 ? 'assistant' : 'user', tokens: 150 }, text(r, 600, 1000 + t));
  const per = acc / nBlocks;
  const blocks: BlockView[] = [];
  let first = 1;
  let sum = 0;
  let cum = 0;
  for (let i = 1; i <= headEnd; i++) {
    sum += messages[i]!.tokens;
    cum += messages[i]!.tokens;
    const isLast = i === headEnd;
    // Cut where the running total passes the next multiple of head/N, so there are exactly N blocks.
    if (isLast || (cum >= per * (blocks.length + 1) && blocks.length < nBlocks - 1 && headEnd - i >= nBlocks - 1 - blocks.length)) {
      const done = opts.done ?? true;
      const own = messages.slice(first, i + 1);
      // The summary keeps every other identifier it saw, so the loss report has something to say.
      const kept = [...new Set(own.flatMap((m) => m.content.match(/\b[a-z]+[A-Z]\w*|\b[a-z]+_\w+/g) ?? []))].filter((_, j) => j % 2 === 0);
      const summary = `## DECISIONS\n- Block ${blocks.length + 1}: backfill in batches.\n## FACTS\n- ${kept.slice(0, 40).join(', ')}\n## OPEN\n- replica lag during the backfill`;
      blocks.push({
        index: blocks.length,
        firstMessage: first,
        lastMessage: i,
        tokens: sum,
        status: done ? 'done' : 'queued',
        streamedTokens: 0,
        summary: done ? summary : null,
        error: null,
        stats: done
          ? {
              inputTokens: 1000 + blocks.length * per,
              outputTokens: Math.ceil(summary.length / 4),
              summaryTokens: null,
              cachedTokens: 900 + blocks.length * per,
              ms: 800 + blocks.length * 40,
            }
          : null,
      });
      first = i + 1;
      sum = 0;
    }
  }
  const total = messages.reduce((a, m) => a + m.tokens, 0);
  const all = blocks.every((b) => b.summary !== null);
  const outTok = blocks.reduce((a, b) => a + (b.stats?.outputTokens ?? 0), 0);
  const compaction: CompactionView = {
    id: 'cmp-review',
    background: false,
    focus: 'keep the DB migration plan',
    state: all ? 'ready' : 'running',
    blocks,
    headTokens: acc,
    totals: all
      ? {
          summaryTokens: outTok,
          compressionRatio: acc / outTok,
          inputTokens: blocks.reduce((a, b) => a + (b.stats?.inputTokens ?? 0), 0),
          outputTokens: outTok,
          cachedTokens: 5000,
          wallMs: 4200,
        }
      : null,
    checks: null,
    verdict: null,
    note: null,
  };
  return {
    sessionId: 's1',
    sessionTitle: 'DB migration',
    messages,
    gauge: { used: total, window: 131072, hi: 0.75, lo: 0.4, block: 0.95 },
    split: {
      strategy: 'token-fraction',
      tailStartIndex: headEnd + 1,
      keptIndices: [],
      headEnd: headEnd + 1,
      allowed: [headEnd + 1],
      frameEnd: 1,
      version: 'none|1',
      compression: 12,
      carriedIndex: null,
      blockTokens: 4096,
    },
    compaction,
    loss: lossWithFallback(messages, compaction),
    plan: {
      compactionId: compaction.id,
      mode: 'parallel',
      layout: 'target-block',
      blockTokens: 4096,
      concurrency: 64,
      predictedMs: 4000,
      measuredMs: all ? 4200 : null,
      candidates: [
        { label: 'parallel · target-block · 4K blocks', predictedMs: 4000, chosen: true },
        { label: 'parallel · cache-aligned · 4K blocks', predictedMs: 9100, chosen: false },
        { label: 'sequential, one call', predictedMs: 24000, chosen: false },
        // Ruled out before it was simulated: the planner gives it no time (null).
        { label: "sequential cache-aligned (ruled out: worker 1's prompt does not fit the window)", predictedMs: null, chosen: false },
      ],
    },
    focus: 'keep the DB migration plan',
  };
}
