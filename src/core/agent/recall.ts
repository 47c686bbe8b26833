import type { StoredMessage } from '../messages';
import { messageText } from '../messages';
import type { AgentTool } from './tools';
import { optionalInt, stringArg } from './tools';

/**
 * The recall tier: compacted-away originals stay searchable. The agent gets
 * exact excerpts (with the message id and role), never a paraphrase.
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
    const text = messageText(m);
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
    if (score === 0) continue;
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
    hits.push({ messageId: m.id, role: m.role, score, excerpts });
  }
  return hits.sort((a, b) => b.score - a.score).slice(0, limit);
}

export function recallTool(archive: () => readonly StoredMessage[]): AgentTool {
  return {
    spec: {
      type: 'function',
      function: {
        name: 'recall',
        description: 'Search the archived original messages that compaction summarised, by keywords; returns exact excerpts.',
        parameters: {
          type: 'object',
          properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 20 } },
          required: ['query'],
          additionalProperties: false,
        },
      },
    },
    needsApproval: () => false,
    describe: (args) => `recall "${String(args.query ?? '')}"`,
    async execute(args) {
      const query = stringArg(args, 'query');
      const limit = Math.min(20, Math.max(1, optionalInt(args, 'limit') ?? 5));
      const archived = archive();
      if (archived.length === 0) return { content: 'Nothing has been compacted yet: the whole conversation is still in context.' };
      const hits = searchArchive(archived, query, limit);
      if (hits.length === 0) return { content: `No archived message matches "${query}" (${archived.length} archived messages searched).` };
      return {
        content: hits.map((h) => `[${h.messageId} ${h.role}]\n${h.excerpts.join('\n')}`).join('\n\n'),
      };
    },
  };
}
