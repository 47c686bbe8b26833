import type { ChatMessage, StoredMessage, ToolCall } from '../messages';
import { messageText } from '../messages';
import { renderPinned } from '../session/sessionState';
import type { PinItem } from '../session/schema';
import type { FactKind } from './types';
import { Rng } from '../rng';

/**
 * Generates a coding-agent session with facts planted where engines lose
 * them: in user text, in assistant text, in the middle of long tool outputs
 * and in consumed tool results. Everything else is filler that carries no
 * checkable token, so every fact the eval finds is a planted one and the
 * ground truth is exact. Seeded; the same options give the same session.
 */
export type PlantSpot = 'user' | 'assistant' | 'long-middle' | 'consumed';

export interface PlantOptions {
  seed?: number;
  /** About this many tokens in the head (the planted turns); default 120,000. */
  headTokens?: number;
  /** Facts of each kind (default 150: enough that a summary's budget, not the head, limits what survives). */
  factsPerKind?: number;
  /** Planted turns (default one per 2K head tokens, 6 to 60: tool outputs of ~1.6K tokens, long by line count, so blocks of 2K still hold whole turns). */
  turns?: number;
  /** Fact-free turns after the head, kept verbatim by the split (default 3). */
  tailTurns?: number;
  pins?: number;
  /** Token counter used to size the head (default: chars / 3.6). */
  countTokens?: (text: string) => number;
}

export interface PlantedFact {
  kind: Exclude<FactKind, 'pin'>;
  key: string;
  line: string;
  spot: PlantSpot;
  messageId: string;
}

export interface PlantedSession {
  messages: StoredMessage[];
  pins: PinItem[];
  planted: PlantedFact[];
  /** Index of the first tail message: compacting everything before it compacts every planted fact. */
  splitIndex: number;
}

type Kind = PlantedFact['kind'];

/** Share of each kind's facts per spot, in parts of 10 (a third of all facts sit in long outputs). */
const SPREAD: Record<Kind, Record<PlantSpot, number>> = {
  identifier: { user: 2.5, assistant: 2.5, 'long-middle': 3.4, consumed: 1.6 },
  path: { user: 2.5, assistant: 2.5, 'long-middle': 3.4, consumed: 1.6 },
  number: { user: 2.5, assistant: 2.5, 'long-middle': 3.4, consumed: 1.6 },
  error: { user: 1, assistant: 1, 'long-middle': 5, consumed: 3 },
  test: { user: 0, assistant: 1, 'long-middle': 6, consumed: 3 },
  decision: { user: 2, assistant: 5, 'long-middle': 3, consumed: 0 },
  constraint: { user: 5, assistant: 2, 'long-middle': 3, consumed: 0 },
  instruction: { user: 10, assistant: 0, 'long-middle': 0, consumed: 0 },
};

const A = [
  'quota',
  'ledger',
  'shard',
  'header',
  'cursor',
  'bucket',
  'relay',
  'vault',
  'ember',
  'pivot',
  'sable',
  'tally',
  'harbor',
  'lumen',
];
const B = ['Sync', 'Planner', 'Cache', 'Probe', 'Drift', 'Gate', 'Index', 'Stamp', 'Merge', 'Slice', 'Fence', 'Spool'];
const UNITS = ['ms', 'MB', 'GiB', '%', 'seconds', 'rows', 'connections', 'KB'];
const VERBS = ['rejects', 'accepts', 'parses', 'flushes', 'retries', 'orders', 'merges', 'skips'];
const NOUNS = ['duplicate keys', 'empty headers', 'stale cursors', 'late writes', 'split batches', 'quoted names'];

const W1 = ['amber', 'cobalt', 'crimson', 'ivory', 'jade', 'onyx', 'coral', 'slate', 'olive', 'russet'];
const W2 = [
  'ingest',
  'export',
  'billing',
  'audit',
  'search',
  'upload',
  'render',
  'signup',
  'refund',
  'backup',
  'import',
  'ledger',
  'report',
  'login',
  'queue',
  'sync',
];
/** Two words unique to fact i of a kind, so the line around its key is unique too (a probe can point at it). */
const tag = (i: number) => `${W1[i % W1.length]} ${W2[Math.floor(i / W1.length) % W2.length]}`;

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

function ident(i: number, salt: string): string {
  const a = A[i % A.length]!;
  const b = B[(i * 7) % B.length]!;
  switch (i % 4) {
    case 0:
      return `${a}${b}${salt}${i}`;
    case 1:
      return `${cap(a)}${b}${salt}${i}`;
    case 2:
      return `${a}_${b.toLowerCase()}_${salt.toLowerCase()}_${i}`;
    default:
      return `${a.toUpperCase()}_${b.toUpperCase()}_${salt.toUpperCase()}_${i}`;
  }
}

/** The key and the line that carries it, for fact i of a kind at a spot. */
function factLine(kind: Kind, i: number, spot: PlantSpot): { key: string; line: string } {
  const tool = spot === 'long-middle' || spot === 'consumed';
  const t = tag(i);
  switch (kind) {
    case 'identifier': {
      const key = ident(i, 'Key');
      return {
        key,
        line: tool
          ? `  resolved symbol ${key} for the ${t} stage`
          : spot === 'user'
            ? `The ${t} handler calls ${key} before it returns.`
            : `I traced the ${t} value through ${key} in the handler.`,
      };
    }
    case 'path': {
      const a = A[i % A.length]!;
      const key = [`src/${a}/${B[i % B.length]!.toLowerCase()}${i}.ts`, `lib/${a}_store_${i}.py`, `config/${a}-${i}.yaml`][i % 3]!;
      return {
        key,
        line: tool
          ? `  modified ${key} for the ${t} stage`
          : spot === 'user'
            ? `Look at ${key} first for the ${t} work.`
            : `The ${t} change belongs in ${key} as far as I can tell.`,
      };
    }
    case 'number': {
      const u = UNITS[i % UNITS.length]!;
      const v = 1000 + i * 37 + 11;
      const key = u === '%' ? `${i % 100}.${Math.floor(i / 100)}${(i * 7) % 10}%` : `${v} ${u}`;
      return {
        key,
        line: tool
          ? `  measured ${key} on the ${t} path`
          : spot === 'user'
            ? `The ${t} budget for this run is ${key}.`
            : `I measured ${key} on the ${t} path.`,
      };
    }
    case 'error': {
      const key = `${cap(A[i % A.length]!)}${B[(i * 5) % B.length]!}${i}Error`;
      const line = `${key}: the ${t} writer lost its lease while the batch was open`;
      return { key, line: spot === 'user' ? `I keep seeing this: ${line}` : line };
    }
    case 'test': {
      const key = `${VERBS[i % VERBS.length]} ${NOUNS[i % NOUNS.length]} variant ${i} correctly`;
      return { key, line: i % 3 === 0 ? `  ✓ ${key}` : `  ✗ ${key}` };
    }
    case 'decision': {
      const key = ident(i, 'Choice');
      return {
        key,
        line: tool
          ? `DECISION: the team settled on ${key} for ${t} retries.`
          : spot === 'user'
            ? `Decision: going with ${key} for ${t} storage.`
            : `DECISION: we will use ${key} for the ${t} rollout.`,
      };
    }
    case 'constraint': {
      const key = `${A[i % A.length]}_${B[(i * 3) % B.length]!.toLowerCase()}_guard_${i}`;
      return {
        key,
        line: tool
          ? `CONSTRAINT: ${key} must never be written from ${t} tests.`
          : spot === 'user'
            ? `Never touch the ${key} table in ${t} production.`
            : `We must not rename ${key} without a ${t} migration.`,
      };
    }
    case 'instruction': {
      const key = ident(i, 'Step');
      return {
        key,
        line: [
          `Please call ${key} after every ${t} change.`,
          `Remember to add ${key} to the ${t} changelog.`,
          `Run ${key} before each ${t} commit.`,
        ][i % 3]!,
      };
    }
  }
}

const USER_FILLER = [
  'Thanks, that looks reasonable so far.',
  'Let us keep going on this part of the work.',
  'Good, carry on with the next piece.',
  'That matches what I expected from the earlier run.',
];
const ASSISTANT_FILLER = [
  'I looked through the module and the structure seems reasonable.',
  'Next I will check the remaining parts of this area.',
  'That covers this part; moving on.',
  'The output is long, so I only skimmed the middle.',
];
const LOG_WORDS = ['step', 'batch', 'chunk', 'group', 'pass', 'round', 'phase'];
const LOG_VERBS = ['finished', 'processed', 'queued', 'checked', 'scheduled', 'drained', 'verified'];

function logLine(r: Rng, n: number): string {
  return `  ${r.pick(LOG_WORDS)} ${n} ${r.pick(LOG_VERBS)}`;
}

const PROBE_LONG_CHARS = 3000;

function build(
  seed: number,
  at: (spot: PlantSpot, t: number) => ReadonlyArray<Omit<PlantedFact, 'messageId'>>,
  turns: number,
  tailTurns: number,
  longChars: number,
): { messages: StoredMessage[]; planted: PlantedFact[]; splitIndex: number; longSample: string } {
  const r = new Rng(seed);
  let longSample = '';
  const messages: StoredMessage[] = [];
  const planted: PlantedFact[] = [];
  let seq = 0;
  const push = (m: ChatMessage, facts: ReadonlyArray<Omit<PlantedFact, 'messageId'>> = []): StoredMessage => {
    const full = { ...m, id: `m${++seq}`, timestamp: 1_750_000_000_000 + seq * 1000, kind: 'normal' } as StoredMessage;
    messages.push(full);
    for (const f of facts) planted.push({ kind: f.kind, key: f.key, line: f.line, spot: f.spot, messageId: full.id });
    return full;
  };
  let callSeq = 0;
  const call = (name: string, args: object): ToolCall => ({
    id: `call_${++callSeq}`,
    type: 'function',
    function: { name, arguments: JSON.stringify(args) },
  });
  push({ role: 'system', content: 'You are a coding agent working in the user workspace. Use the tools to read, run and edit.' });

  const turn = (t: number, plant: boolean): void => {
    const u = plant ? at('user', t) : [];
    push({ role: 'user', content: [r.pick(USER_FILLER), ...u.map((f) => f.line), r.pick(USER_FILLER)].join('\n') }, u);
    const a = plant ? at('assistant', t) : [];
    const c1 = call('run_command', { command: 'npm test' });
    push({ role: 'assistant', content: [r.pick(ASSISTANT_FILLER), ...a.map((f) => f.line)].join('\n'), tool_calls: [c1] }, a);
    const mid = plant ? at('long-middle', t) : [];
    const lines: string[] = [];
    for (let n = 0, chars = 0; chars < (plant ? longChars : 2000); n++) {
      const l = logLine(r, n);
      lines.push(l);
      chars += l.length + 1;
    }
    // Evenly inside the middle third, far from the head and tail a plain cut keeps.
    mid.forEach((f, k) => lines.splice(Math.floor(lines.length * (0.35 + (0.3 * (k + 1)) / (mid.length + 1))), 0, f.line));
    if (longSample === '') longSample = lines.join('\n');
    push({ role: 'tool', content: lines.join('\n'), tool_call_id: c1.id }, mid);
    const c2 = call('read_file', { path: 'notes' });
    push({ role: 'assistant', content: r.pick(ASSISTANT_FILLER), tool_calls: [c2] });
    const con = plant ? at('consumed', t) : [];
    const short = Array.from({ length: 16 }, (_, n) => logLine(r, n));
    con.forEach((f, k) => short.splice(4 + 3 * k, 0, f.line));
    push({ role: 'tool', content: short.join('\n'), tool_call_id: c2.id }, con);
    push({ role: 'assistant', content: r.pick(ASSISTANT_FILLER) });
  };
  for (let t = 0; t < turns; t++) turn(t, true);
  const splitIndex = messages.length;
  for (let t = 0; t < tailTurns; t++) turn(t, false);
  return { messages, planted, splitIndex, longSample };
}

export function plantSession(opts: PlantOptions = {}): PlantedSession {
  const perKind = opts.factsPerKind ?? 150;
  const turns = opts.turns ?? Math.max(6, Math.min(60, Math.round((opts.headTokens ?? 120_000) / 2000)));
  const headTokens = opts.headTokens ?? 120_000;
  // A rough count when the caller has no tokenizer: about 3.6 chars per token for this text.
  const countTokens = opts.countTokens ?? ((t: string) => Math.ceil(t.length / 3.6));
  const planned: Array<{ kind: Kind; key: string; line: string; spot: PlantSpot }> = [];
  for (const kind of Object.keys(SPREAD) as Kind[]) {
    const spread = SPREAD[kind];
    const spots = (Object.keys(spread) as PlantSpot[]).filter((s) => spread[s] > 0);
    // Largest remainder: each spot gets its share of perKind, the counts add up exactly.
    const exact = spots.map((s) => (spread[s] / 10) * perKind);
    const counts = exact.map(Math.floor);
    let left = perKind - counts.reduce((a, b) => a + b, 0);
    for (const k of exact.map((x, k) => ({ k, f: x - Math.floor(x) })).sort((a, b) => b.f - a.f)) if (left-- > 0) counts[k.k]!++;
    let i = 0;
    spots.forEach((spot, k) => {
      for (let n = 0; n < counts[k]!; n++, i++) planned.push({ kind, spot, ...factLine(kind, i, spot) });
    });
  }
  const at = (spot: PlantSpot, t: number): typeof planned => planned.filter((p) => p.spot === spot).filter((_, k) => k % turns === t);

  // Two passes: the first measures everything but the long outputs, the second sizes them to hit the head target.
  const probe = build(opts.seed ?? 1, at, turns, opts.tailTurns ?? 3, PROBE_LONG_CHARS);
  const probeTokens = probe.messages.slice(0, probe.splitIndex).reduce((n, m) => n + countTokens(messageText(m)) + 4, 0);
  const perLongChar = (countTokens(probe.longSample) || 1) / Math.max(1, probe.longSample.length);
  const otherTokens = probeTokens - turns * PROBE_LONG_CHARS * perLongChar;
  const longChars = Math.max(1200, (headTokens - otherTokens) / turns / perLongChar);
  const { messages, planted, splitIndex: rawSplit } = build(opts.seed ?? 1, at, turns, opts.tailTurns ?? 3, longChars);
  const pins: PinItem[] = Array.from({ length: opts.pins ?? 5 }, (_, k) => ({
    id: `pin${k + 1}`,
    text: `Keep the export format of ${ident(k, 'Pin')} unchanged.`,
    kind: 'constraint',
    source: 'user',
    messageId: messages[2 + 6 * k]?.id ?? 'm2',
    createdAt: 1_750_000_000_000,
  }));
  // The pinned block sits after the system prompt, as in a session's active context.
  const pinned = renderPinned(pins, 1_750_000_000_000);
  if (pinned) messages.splice(1, 0, pinned);
  return { messages, pins, planted, splitIndex: rawSplit + (pinned ? 1 : 0) };
}
