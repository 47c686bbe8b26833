/** Deterministic ViewSnapshots for the webview tests and benchmark. */
import type { BlockView, CompactionView, ViewMessage, ViewSnapshot } from '../../src/protocol/messages';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS =
  'the migration plan keeps the users table and adds a nullable column before backfilling rows in batches of ten thousand while reads continue'.split(
    ' ',
  );

export function makeMessages(n: number, seed = 7): ViewMessage[] {
  const r = rng(seed);
  const text = (k: number) => Array.from({ length: k }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  const out: ViewMessage[] = [];
  const push = (m: Omit<ViewMessage, 'index' | 'id' | 'truncated'> & { truncated?: boolean }) => {
    const index = out.length;
    out.push({ id: `m${index}`, index, truncated: false, ...m });
  };
  push({ role: 'system', kind: 'normal', origin: 'system', tokens: 900, content: 'You are a careful coding agent.' });
  if (n > 3) {
    push({
      role: 'user',
      kind: 'summary',
      origin: 'summary',
      tokens: 1200,
      content: '## DECISIONS\n- Keep the **users** table.\n\n## FACTS\n- `src/db/migrate.ts` runs batches of 10,000.',
      archivedCount: 42,
      verdict: { alignment: 8, nonContradiction: 9, overall: 8, accepted: true, diagnosis: 'Supports the next steps.', attempt: 1 },
    });
  }
  let turn = 0;
  while (out.length < n) {
    const phase = (out.length - 2) % 4;
    if (phase === 0) {
      push({ role: 'user', kind: 'normal', origin: 'tail', tokens: 20 + Math.floor(r() * 200), content: `Turn ${turn++}: ${text(12)}` });
    } else if (phase === 1) {
      push({
        role: 'assistant',
        kind: 'normal',
        origin: 'tail',
        tokens: 40 + Math.floor(r() * 300),
        content: '',
        reasoning: `I should ${text(8)}.`,
        toolCalls: [{ id: `c${out.length}`, name: 'read_file', arguments: JSON.stringify({ path: `src/file${out.length}.ts` }) }],
      });
    } else if (phase === 2) {
      push({
        role: 'tool',
        kind: 'normal',
        origin: 'tail',
        tokens: 100 + Math.floor(r() * 2500),
        content: `export const x${out.length} = 1;\n${text(30)}`,
        toolCallId: `c${out.length - 1}`,
      });
    } else {
      push({
        role: 'assistant',
        kind: 'normal',
        origin: 'tail',
        tokens: 30 + Math.floor(r() * 400),
        content: `Done with step ${out.length}. ${text(20)}\n\n\`\`\`ts\nconst a = ${out.length};\n\`\`\``,
      });
    }
  }
  return out.slice(0, n);
}

export function makeSnapshot(n = 60, opts: { seed?: number; compaction?: CompactionView | null; depth?: number } = {}): ViewSnapshot {
  const messages = makeMessages(n, opts.seed);
  const total = messages.reduce((a, m) => a + m.tokens, 0);
  const allowed = messages.filter((m) => m.role === 'user' && m.kind === 'normal').map((m) => m.index);
  // Strategy's choice: the allowed boundary nearest to 70% of the tokens.
  let acc = 0;
  let tail = allowed[allowed.length - 1] ?? 0;
  for (const m of messages) {
    if (acc >= total * 0.7) {
      tail = allowed.find((a) => a >= m.index) ?? tail;
      break;
    }
    acc += m.tokens;
  }
  return {
    session: { id: 's1', title: 'DB migration', createdAt: 0, messageCount: n },
    sessions: [
      { id: 's1', title: 'DB migration', createdAt: 0, messageCount: n },
      { id: 's0', title: 'Older session', createdAt: 0, messageCount: 12 },
    ],
    messages,
    gauge: { used: total, window: Math.max(131072, Math.ceil(total * 1.25)), hi: 0.75, lo: 0.4, block: 0.95 },
    split: {
      strategy: 'token-fraction',
      tailStartIndex: tail,
      keptIndices: [],
      headEnd: tail,
      allowed,
      frameEnd: 1,
      version: 'none|1',
      compression: 12,
      carriedIndex: null,
      blockTokens: 4096,
    },
    pins: [{ id: 'p1', text: 'Never drop the users table.', kind: 'constraint', source: 'user' }],
    focus: 'keep the DB migration plan',
    compaction: opts.compaction ?? null,
    compactionDepth: opts.depth ?? 1,
    agent: { running: false, streaming: '', approvals: [], waiting: null },
    settings: {
      endpoint: 'http://localhost:8000/v1',
      model: 'qwen3-coder',
      mode: 'parallel',
      layout: 'cache-aligned',
      verbosity: 'detailed',
    },
    connection: { state: 'ok', message: null },
    trusted: true,
  };
}

export function makeCompaction(snap: ViewSnapshot, blocks = 4): CompactionView {
  const tail = snap.split.tailStartIndex;
  const per = Math.max(1, Math.floor((tail - 1) / blocks));
  const bs: BlockView[] = [];
  for (let i = 0; i < blocks; i++) {
    const first = 1 + i * per;
    const last = i === blocks - 1 ? tail - 1 : first + per - 1;
    const tokens = snap.messages.slice(first, last + 1).reduce((a, m) => a + m.tokens, 0);
    bs.push({
      index: i,
      firstMessage: first,
      lastMessage: last,
      tokens,
      status: 'queued',
      streamedTokens: 0,
      summary: null,
      error: null,
      stats: null,
    });
  }
  return {
    id: 'cmp1',
    background: false,
    focus: 'keep the DB migration plan',
    state: 'running',
    blocks: bs,
    headTokens: bs.reduce((a, b) => a + b.tokens, 0),
    // As the host sends it: the split the compaction was planned at, where the handle starts.
    tailStartIndex: tail,
    totals: null,
    checks: null,
    verdict: null,
    note: null,
  };
}
