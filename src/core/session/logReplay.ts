import { describeIssues, sessionEventSchema } from './schema';
import type { SessionState } from './sessionState';
import { applyEvent, checkEvent, emptyState } from './sessionState';

/**
 * Parsing and replaying a JSONL session log, without touching storage.
 *
 * A crash can tear only the last line (appends are one write each), so a
 * final line that is incomplete JSON without its newline is reported apart
 * (`torn`): the store drops it and keeps the session; anything else damaged is
 * refused with the line named.
 */
export type ParseResult =
  | { ok: true; state: SessionState; torn?: { line: number; keptChars: number }; unterminated?: boolean }
  | { ok: false; line: number; reason: string };

/** Text between two pauses of an asynchronous replay: about 10 ms of parsing on a 2-core machine. */
const SLICE_CHARS = 1 << 20;

/**
 * Replays the log step by step, yielding after about SLICE_CHARS characters
 * so a caller on an event loop can let other work run; the generator's return
 * value is the result.
 */
export function* replaySteps(text: string): Generator<void, ParseResult> {
  const lines = text.split('\n');
  // A file always ends with a newline; the empty string after it is not a line.
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) return { ok: false, line: 1, reason: 'the file is empty (no session header)' };
  let state: SessionState | undefined;
  let index = new Map<string, number>();
  let sinceYield = 0;
  let offset = 0;
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = lines[i]!;
    if (sinceYield > SLICE_CHARS) {
      sinceYield = 0;
      yield;
    }
    sinceYield += raw.length;
    if (raw.trim() === '') return { ok: false, line: lineNo, reason: 'blank line' };
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (err) {
      const torn = i === lines.length - 1 && !text.endsWith('\n');
      if (torn && state) return { ok: true, state, torn: { line: lineNo, keptChars: offset } };
      return {
        ok: false,
        line: lineNo,
        reason: torn ? 'the last line is incomplete (the write was interrupted)' : `not valid JSON (${(err as Error).message})`,
      };
    }
    offset += raw.length + 1;
    const ev = sessionEventSchema.safeParse(json);
    if (!ev.success) return { ok: false, line: lineNo, reason: `not a valid session event: ${describeIssues(ev.error)}` };
    const e = ev.data;
    if (i === 0) {
      if (e.type !== 'session') return { ok: false, line: 1, reason: `the first line must be the session header, found a "${e.type}" event` };
      state = emptyState(e.id, e.createdAt, e.title);
      index = new Map();
      continue;
    }
    try {
      checkEvent(state!, e, index);
      applyEvent(state!, e, index);
    } catch (err) {
      return { ok: false, line: lineNo, reason: (err as Error).message };
    }
  }
  return text.endsWith('\n') ? { ok: true, state: state! } : { ok: true, state: state!, unterminated: true };
}

/** Parses and replays a JSONL log in one go. */
export function parseLog(text: string): ParseResult {
  const steps = replaySteps(text);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** The same, pausing between slices so a large log does not hold the event loop for long at a time. */
export async function parseLogYielding(text: string, pause: () => Promise<void>): Promise<ParseResult> {
  const steps = replaySteps(text);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await pause();
  }
}

/** A short stable fingerprint of the text (FNV-1a), naming a backup so the same damage is backed up once. */
export function fingerprint(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0') + text.length.toString(16);
}
