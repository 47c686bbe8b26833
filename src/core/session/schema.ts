import { z } from 'zod';

/**
 * Schemas for what is read from disk or imported. Everything from outside is
 * validated before the engine trusts it, so a damaged file is reported with
 * the line and field at fault instead of failing somewhere later.
 */

/** What a calibration's local count includes now: the messages and the tool definitions sent with them. */
export const CALIBRATION_BASIS = 'messages+tools';

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const meta = {
  id: z.string().min(1),
  timestamp: z.number().finite(),
  kind: z.enum(['normal', 'summary', 'pinned']),
  tokens: z.number().int().nonnegative().optional(),
};

export const storedMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string(), ...meta }),
  z.object({ role: z.literal('user'), content: z.string(), ...meta }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    tool_calls: z.array(toolCall).optional(),
    reasoning: z.string().optional(),
    ...meta,
  }),
  z.object({ role: z.literal('tool'), content: z.string(), tool_call_id: z.string(), ...meta }),
]);

export const pinItemSchema = z.object({
  id: z.string().min(1),
  text: z.string().min(1),
  kind: z.enum(['constraint', 'open-loop', 'note']),
  source: z.enum(['user', 'agent']),
  /** The message the pin was taken from, if any. */
  messageId: z.string().optional(),
  createdAt: z.number(),
});

export const compactionRecordSchema = z.object({
  id: z.string().min(1),
  at: z.number(),
  summary: storedMessageSchema,
  /** First message kept verbatim as a contiguous tail; null when the tail was empty at snapshot time. */
  tailStartId: z.string().nullable(),
  /** Messages before the tail kept verbatim anyway (the preserve-user-messages strategy). */
  keptIds: z.array(z.string()),
  /** Everything this compaction summarised, including an earlier summary's id when it re-compacts. */
  coveredIds: z.array(z.string()),
  /** The newest message in the snapshot; with no tail, the active context resumes after it. */
  lastSnapshotId: z.string().nullable(),
  strategy: z.string(),
  /** 1 for a summary of originals; n + 1 when it folds in a layer-n summary. */
  depth: z.number().int().positive(),
  focus: z.string().optional(),
  /** Recent-turns strategy: the per-turn budget the preserved turns are held to when spliced. */
  turnBudget: z.number().int().positive().optional(),
  stats: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).optional(),
});

/** The judge's verdict on a summary (the same shape as core/agent/judge's Verdict). */
export const verdictSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('scored'),
    alignment: z.number(),
    nonContradiction: z.number(),
    overall: z.number(),
    diagnosis: z.string(),
    accepted: z.boolean(),
  }),
  z.object({ kind: z.literal('error'), message: z.string() }),
]);

export const sessionEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('session'), v: z.literal(1), id: z.string().min(1), createdAt: z.number(), title: z.string().optional() }),
  z.object({ type: z.literal('message'), message: storedMessageSchema }),
  z.object({ type: z.literal('compaction'), compaction: compactionRecordSchema }),
  z.object({ type: z.literal('undo'), compactionId: z.string().min(1), at: z.number() }),
  z.object({ type: z.literal('pins'), pins: z.array(pinItemSchema), at: z.number() }),
  z.object({ type: z.literal('focus'), focus: z.string().nullable(), at: z.number() }),
  /**
   * Local token counts by message id (originals and summaries), so reopening
   * a session does not tokenise it again. `counter` names what counted them;
   * counts from another counter are ignored on replay and made again.
   */
  /** The judge's verdict on a compaction's summary (it may arrive before or after adoption). */
  z.object({
    type: z.literal('verdict'),
    compactionId: z.string().min(1),
    attempt: z.number().int().positive(),
    verdict: verdictSchema,
    at: z.number(),
  }),
  /** The local-to-server token ratio learnt so far (see core/tokens/calibration.ts). */
  z.object({
    type: z.literal('calibration'),
    factor: z.number().positive().finite(),
    samples: z.number().int().nonnegative(),
    /** What the local side of the ratio counted: absent in logs from before the tool definitions were counted. */
    basis: z.literal(CALIBRATION_BASIS).optional(),
    at: z.number(),
  }),
  z.object({
    type: z.literal('counts'),
    counter: z.string().min(1),
    counts: z.record(z.string(), z.number().int().nonnegative()),
    at: z.number(),
  }),
]);

export type SessionEvent = z.infer<typeof sessionEventSchema>;
export type CompactionRecord = z.infer<typeof compactionRecordSchema>;
export type PinItem = z.infer<typeof pinItemSchema>;
export type StoredVerdict = { attempt: number; verdict: z.infer<typeof verdictSchema>; at: number };

/** One-line description of a validation failure, naming the field path. */
export function describeIssues(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : '(root)'}: ${i.message}`)
    .join('; ');
}
