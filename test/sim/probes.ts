/**
 * QA probes (splitpoint eval): a question about one fact, asked after a
 * context. The simulator answers only from that context, deterministically:
 * a cloze is filled only when a line of the context matches the sentence
 * around the blank exactly; a test's status only when a line names the test.
 * So it answers right with the full context and, after compaction, exactly
 * when the summary kept the statement.
 */
import { contentText, type WireMessage } from './template';

export const PROBE_MARKER = 'SPLITPOINT-PROBE';
const BLANK = '____';

export type Probe = { type: 'cloze'; cloze: string } | { type: 'status'; test: string };

function pick(text: string, tag: string): string | undefined {
  const m = text.match(new RegExp(`<${tag}>\\n?([\\s\\S]*?)\\n?</${tag}>`));
  return m ? m[1] : undefined;
}

export function detectProbe(messages: WireMessage[]): { probe: Probe; context: string } | undefined {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user') return undefined;
  const text = contentText(last.content);
  if (!text.startsWith(PROBE_MARKER)) return undefined;
  const cloze = pick(text, 'CLOZE');
  const test = pick(text, 'TEST');
  const probe: Probe | undefined =
    cloze !== undefined ? { type: 'cloze', cloze } : test !== undefined ? { type: 'status', test } : undefined;
  if (!probe) return undefined;
  const context = messages
    .slice(0, -1)
    .map((m) => [contentText(m.content), ...(m.tool_calls ?? []).map((c) => c.function.arguments)].join('\n'))
    .join('\n');
  return { probe, context };
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Whitespace-tolerant literal. */
const loose = (s: string) => s.trim().split(/\s+/).filter(Boolean).map(esc).join('\\s+');

export function answerProbe(probe: Probe, context: string): string {
  if (probe.type === 'status') {
    for (const line of context.split('\n')) {
      if (!line.includes(probe.test)) continue;
      if (/[✗✖×]|\bFAIL(?:ED)?\b|\bnot ok\b/.test(line)) return 'failed';
      if (/[✓✔√]|\bPASS(?:ED)?\b|\bok\b/.test(line)) return 'passed';
    }
    return 'UNKNOWN';
  }
  const at = probe.cloze.indexOf(BLANK);
  if (at < 0) return 'UNKNOWN';
  const left = probe.cloze.slice(0, at);
  const right = probe.cloze.slice(at + BLANK.length);
  // The fill ends where the text after the blank starts and that text ends at a word boundary ("3.01%." is not "3").
  const re = new RegExp(
    `${left.trim() ? loose(left) + '\\s*' : ''}([^\\n]{1,160}?)${right.trim() ? '\\s*' + loose(right) + '(?![\\w%])' : '(?=\\s|$)'}`,
  );
  const m = context.match(re);
  return m ? m[1]!.trim().replace(/^[-*•]\s+/, '') : 'UNKNOWN';
}
