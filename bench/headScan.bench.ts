/**
 * The first compaction of a session scans its whole head twice with the fidelity patterns: the planner's cuts of
 * long tool outputs (salience of every line) and, when the preview is ready, the loss report's fact extraction.
 * Both remember what they found per text, so later compactions of the session pay little; the first pays in full,
 * on the extension host's thread (issue 12: the first compaction's client CPU). Run with `npm run bench -- headScan`.
 *
 * Each round is a fresh process, so "cold" is a process that has never run the code (as the first compaction in an
 * extension host), measured in this order: cuts of every message, then the facts of the head. "Warm" is the median
 * of ten more scans in the same process, each over the same session with every line changed (a suffix), so that
 * no memo answers: the cost of a session never seen, on compiled code.
 *
 * Then one tool output of a single 10 MB line of each of a few shapes (a repeated path, camelCase humps, a dotted
 * run of digits, many numbers with units…), through the loss report's fact scan and the planner's cut: an imported
 * session can hold such an output, and both scans run on the host's thread. "RangeError" is a scan that threw.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { cutText } from '../src/core/compaction/toolCuts';
import { extractFacts } from '../src/core/fidelity';
import type { ChatMessage } from '../src/core/messages';
import { asst, toolPair, user } from '../test/unit/helpers/build';
import { median } from './stats';

const SESSION = 'test/fixtures/long-session.json';
const ROUNDS = Number(process.env.ROUNDS) || 7;
const WARM = 10;

interface Round {
  cutsCold: number;
  factsCold: number;
  cutsWarm: number;
  factsWarm: number;
}

function timed(f: () => void): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

function child(): Round {
  const session: ChatMessage[] = JSON.parse(readFileSync(SESSION, 'utf8'));
  const changed = (k: number): ChatMessage[] =>
    session.map((m) => (typeof m.content === 'string' ? { ...m, content: m.content.replace(/\n/g, ` r${k}\n`) } : m) as ChatMessage);
  // The head a compaction of this session replaces is most of it; the last fifth stands for the kept tail.
  const head = (ms: ChatMessage[]) => ms.slice(0, Math.floor(ms.length * 0.8));
  const cuts = (ms: ChatMessage[]) => () => {
    for (let i = 0; i < ms.length; i++) cutText(ms, i);
  };
  const first = changed(0);
  const cutsCold = timed(cuts(first));
  const factsCold = timed(() => extractFacts(head(first)));
  const cw: number[] = [];
  const fw: number[] = [];
  for (let k = 1; k <= WARM; k++) {
    const ms = changed(k);
    cw.push(timed(cuts(ms)));
    fw.push(timed(() => extractFacts(head(ms))));
  }
  return { cutsCold, factsCold, cutsWarm: median(cw), factsWarm: median(fw) };
}

const HUGE = 10_000_000;
const SHAPES: Record<string, string> = {
  'a/ repeated': 'a/'.repeat(HUGE / 2),
  'a/b.ts, spaced': 'a/b.ts '.repeat(HUGE / 7),
  'aB repeated': 'aB'.repeat(HUGE / 2),
  'a_ repeated': 'a_'.repeat(HUGE / 2),
  '1. repeated': '1.'.repeat(HUGE / 2),
  '1 ms, spaced': '1 ms '.repeat(HUGE / 5),
  'FooError, spaced': 'FooError '.repeat(HUGE / 9),
  'one letter': 'a'.repeat(HUGE),
};

function hugeLines(): string[] {
  const out: string[] = [];
  const run = (f: () => void) => {
    try {
      return `${timed(f).toFixed(0)} ms`;
    } catch (e) {
      return (e as Error).name;
    }
  };
  for (const [shape, content] of Object.entries(SHAPES)) {
    const ms = [user('run it'), ...toolPair('run', content), asst('done')];
    out.push(`  ${shape.padEnd(18)} facts ${run(() => extractFacts(ms)).padStart(11)}   cut ${run(() => cutText(ms, 2)).padStart(11)}`);
  }
  return out;
}

function main(): void {
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const p = spawnSync(process.execPath, ['--import=tsx', process.argv[1]!, 'child'], { encoding: 'utf8' });
    if (p.status !== 0) throw new Error(`round ${r + 1} failed: ${p.stderr}`);
    rounds.push(JSON.parse(p.stdout) as Round);
  }
  const session: ChatMessage[] = JSON.parse(readFileSync(SESSION, 'utf8'));
  const chars = session.reduce((a, m) => a + (typeof m.content === 'string' ? m.content.length : 0), 0);
  console.log(`${SESSION}: ${session.length} messages, ${chars} characters of content; node ${process.version}; ${ROUNDS} fresh processes`);
  console.log('ms, median (range) over the rounds');
  const col = (f: (x: Round) => number) => {
    const xs = rounds.map(f);
    return `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;
  };
  console.log(`  cuts of every message   cold ${col((x) => x.cutsCold)}   warm ${col((x) => x.cutsWarm)}`);
  console.log(`  facts of the head       cold ${col((x) => x.factsCold)}   warm ${col((x) => x.factsWarm)}`);
  console.log(`  both                    cold ${col((x) => x.cutsCold + x.factsCold)}   warm ${col((x) => x.cutsWarm + x.factsWarm)}`);
  console.log(`one tool output, a single line of ${HUGE / 1e6} MB (in this process, once each)`);
  for (const l of hugeLines()) console.log(l);
}

if (process.argv[2] === 'child') process.stdout.write(JSON.stringify(child()));
else main();
