import type { StoredMessage } from '../messages';
import { messageText } from '../messages';
import type { SpillPort, SpilledOutput } from './toolOutput';
import type { AgentTool } from './tools';
import { AGENT_TOOL_SPECS } from './toolSpecs';
import { optionalInt, stringArg } from './tools';

/**
 * The recall tier: compacted-away originals, and the full text of tool outputs
 * cut to fit the session, stay searchable. The agent gets exact excerpts (with
 * the message id and role, or the spilled output's name), never a paraphrase.
 */
export interface RecallHit {
  messageId: string;
  role: string;
  score: number;
  excerpts: string[];
}

function terms(query: string): string[] {
  return [
    ...new Set(
      query
        .toLowerCase()
        .split(/[^\p{L}\p{N}_./-]+/u)
        .filter((t) => t.length >= 2),
    ),
  ];
}

export function searchArchive(archive: readonly StoredMessage[], query: string, limit = 5, window = 240): RecallHit[] {
  const q = terms(query);
  if (q.length === 0) return [];
  const hits: RecallHit[] = [];
  for (const m of archive) {
    const hit = searchText(messageText(m), q, window);
    if (hit) hits.push({ messageId: m.id, role: m.role, ...hit });
  }
  return hits.sort((a, b) => b.score - a.score).slice(0, limit);
}

/** The role recall gives a hit in a spilled tool output. */
const SPILLED_ROLE = 'full tool output';

/**
 * The same search over the full text of tool outputs that were cut (capToolOutput): the part cut from the
 * session is only there. Reads one output at a time; `searched` is how many were read.
 */
export async function searchSpilled(
  spilled: AsyncIterable<SpilledOutput>,
  query: string,
  limit = 5,
  window = 240,
  signal?: AbortSignal,
): Promise<{ hits: RecallHit[]; searched: number }> {
  const q = terms(query);
  const hits: RecallHit[] = [];
  let searched = 0;
  if (q.length === 0) return { hits, searched };
  for await (const s of spilled) {
    if (signal?.aborted) break;
    searched++;
    const hit = searchText(s.text, q, window);
    if (hit) hits.push({ messageId: s.name, role: SPILLED_ROLE, ...hit });
  }
  return { hits: hits.sort((a, b) => b.score - a.score).slice(0, limit), searched };
}

function searchText(text: string, q: readonly string[], window: number): { score: number; excerpts: string[] } | undefined {
  const lower = text.toLowerCase();
  let score = 0;
  const positions: number[] = [];
  for (const t of q) {
    let from = 0;
    let found = 0;
    for (;;) {
      const at = lower.indexOf(t, from);
      if (at < 0 || found >= 20) break;
      found++;
      positions.push(at);
      from = at + t.length;
    }
    // Every term present counts more than many repeats of one term.
    if (found > 0) score += 10 + Math.min(found, 5);
  }
  if (score === 0) return undefined;
  positions.sort((a, b) => a - b);
  const excerpts: string[] = [];
  let lastEnd = -1;
  for (const p of positions) {
    if (p < lastEnd) continue;
    const start = Math.max(0, p - window / 2);
    const end = Math.min(text.length, p + window / 2);
    excerpts.push(`${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`);
    lastEnd = end;
    if (excerpts.length >= 3) break;
  }
  return { score, excerpts };
}

/**
 * `spill`, when given, is where capToolOutput saves the full text of a cut output: recall searches it too, since
 * the agent's file tools cannot reach the spill files.
 */
export function recallTool(archive: () => readonly StoredMessage[], spill?: SpillPort): AgentTool {
  const spilled = spill?.spilled?.bind(spill);
  return {
    // The agent's own definition, byte for byte: compaction workers replay the tools for the prefix cache.
    spec: AGENT_TOOL_SPECS.find((t) => t.function.name === 'recall')!,
    needsApproval: () => false,
    describe: (args) => `recall "${String(args.query ?? '')}"`,
    async execute(args, ctx) {
      const query = stringArg(args, 'query');
      const limit = Math.min(20, Math.max(1, optionalInt(args, 'limit') ?? 5));
      const archived = archive();
      const hits = searchArchive(archived, query, limit);
      let outputs = 0;
      let failed = '';
      if (spilled) {
        try {
          const r = await searchSpilled(spilled(), query, limit, 240, ctx.signal);
          hits.push(...r.hits);
          outputs = r.searched;
        } catch (err) {
          failed = ` (Searching the full tool outputs failed: ${(err as Error).message}.)`;
        }
      }
      if (archived.length === 0 && outputs === 0 && !failed) {
        const none = spilled ? 'Nothing has been compacted yet and no tool output was truncated' : 'Nothing has been compacted yet';
        return { content: `${none}: the whole conversation is still in context.` };
      }
      if (hits.length === 0) {
        const searched = spilled
          ? `${archived.length} archived messages and ${outputs} full tool outputs searched`
          : `${archived.length} archived messages searched`;
        return { content: `No archived message${spilled ? ' or tool output' : ''} matches "${query}" (${searched}).${failed}` };
      }
      return {
        content:
          hits
            .sort((a, b) => b.score - a.score)
            .slice(0, limit)
            .map((h) => `[${h.messageId} ${h.role}]\n${h.excerpts.join('\n')}`)
            .join('\n\n') + failed,
      };
    },
  };
}
