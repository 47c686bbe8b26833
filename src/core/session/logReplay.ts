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

/** Text between two pauses of an asynchronous replay: a few ms of parsing on a 2-core machine. */
const SLICE_CHARS = 1 << 18;

/**
 * Replays the log step by step, yielding after about SLICE_CHARS characters
 * so a caller on an event loop can let other work run; the generator's return
 * value is the result.
 */
export function* replaySteps(text: string): Generator<void, ParseResult> {
  // Lines are walked with indexOf rather than split, so a large log is never copied whole at once.
  // A file always ends with a newline; the empty string after it is not a line.
  if (text.length === 0) return { ok: false, line: 1, reason: 'the file is empty (no session header)' };
  let state: SessionState | undefined;
  let index = new Map<string, number>();
  let sinceYield = 0;
  let lineNo = 0;
  for (let at = 0; at < text.length;) {
    lineNo++;
    const nl = text.indexOf('\n', at);
    const raw = nl < 0 ? text.slice(at) : text.slice(at, nl);
    const lineStart = at;
    at = nl < 0 ? text.length : nl + 1;
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
      const torn = nl < 0;
      if (torn && state) return { ok: true, state, torn: { line: lineNo, keptChars: lineStart } };
      return {
        ok: false,
        line: lineNo,
        reason: torn ? 'the last line is incomplete (the write was interrupted)' : `not valid JSON (${(err as Error).message})`,
      };
    }
    const ev = sessionEventSchema.safeParse(json);
    if (!ev.success) return { ok: false, line: lineNo, reason: `not a valid session event: ${describeIssues(ev.error)}` };
    const e = ev.data;
    if (lineNo === 1) {
      if (e.type !== 'session')
        return { ok: false, line: 1, reason: `the first line must be the session header, found a "${e.type}" event` };
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
