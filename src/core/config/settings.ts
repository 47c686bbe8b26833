import { z } from 'zod';
import type { Layout, Verbosity } from '../compaction/prompts';
import type { CompactionMode } from '../compaction/plan';
import type { StrategyName } from '../splitPoint';
import { LAYOUT_SETTINGS, MODE_SETTINGS, STRATEGY_NAMES, VERBOSITIES } from '../vocabulary';
import type { BudgetThresholds } from '../triggers';
import { DEFAULT_THRESHOLDS, validateThresholds } from '../triggers';
import { DEFAULT_COMMAND_ENV } from './commandEnvDefaults';

/**
 * Splitpoint's settings as plain data, read through a `get(key)` function so
 * the same reader serves VS Code's configuration (src/host/config.ts) and
 * tests. A bad value never stops the extension: it is replaced by its default
 * and reported with the setting's name, what was wrong, and what is used
 * instead. The API key is deliberately not a setting (SecretStorage only).
 */

export interface EndpointOverride {
  /** Base URL; undefined = the agent's endpoint. */
  endpoint: string | undefined;
  /** Model id; undefined = the agent's model. */
  model: string | undefined;
}

export interface SplitpointSettings {
  endpoint: string;
  /** undefined = the first model the server lists. */
  model: string | undefined;
  /** undefined = max_model_len from the server. */
  contextWindow: number | undefined;
  thresholds: BudgetThresholds;
  strategy: StrategyName;
  /** 'auto' = the planner chooses. */
  mode: CompactionMode | 'auto';
  /** 0 = the planner chooses. */
  blockTokens: number;
  /** Most compaction requests in flight per endpoint; the planner picks up to this. */
  maxConcurrency: number;
  /** 'auto' = the planner chooses. */
  layout: Layout | 'auto';
  /** Extra compaction endpoints (replicas of the agent's model); target-block workers spread over them. */
  compactionEndpoints: string[];
  /** Named performance profile for the planner; undefined = learned from the server, else h100-7b. */
  perfProfile: string | undefined;
  /** Most a background compaction may slow the agent's decoding (time per output token ratio). */
  maxAgentSlowdown: number;
  verbosity: Verbosity;
  asyncCompaction: boolean;
  judge: { enabled: boolean; threshold: number };
  compactor: EndpointOverride;
  judgeEndpoint: EndpointOverride;
  /** Minutes of inactivity before an idle compaction; 0 = off. */
  idleMinutes: number;
  maxSteps: number;
  replyReserve: number;
  commandAllowlist: string[];
  commandTimeoutSeconds: number;
  /** Environment variables commands get; nothing else is inherited (the API key never is). */
  commandEnv: string[];
  /** 'auto': confine commands with bubblewrap where it works (Linux); 'off': never. */
  commandSandbox: 'auto' | 'off';
  /** Whether sandboxed commands may use the network. */
  commandNetwork: boolean;
  /** Overall deadline of one model request (a begun reply waits at most 120 s, or this if shorter, for its next token). */
  requestTimeoutSeconds: number;
  /** A PEM file of certificate authorities to trust for https endpoints, with the well-known ones Node ships; undefined = none. */
  caFile: string | undefined;
}

const url = z
  .string()
  .trim()
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL such as http://localhost:8000/v1');

/** An optional URL: empty string = not set. */
const optionalUrl = z.union([z.literal(''), url]);
const fraction = z.number().gt(0).max(1);
const posInt = (min: number, max: number) => z.number().int().min(min).max(max);

/**
 * One row per setting: its key under `splitpoint.`, its schema and default.
 * The manifest test checks package.json's contributes.configuration against
 * this table, so the two cannot drift.
 */
export const SETTING_DEFS = {
  endpoint: { schema: url, default: 'http://localhost:8000/v1' },
  model: { schema: z.string().trim(), default: '' },
  contextWindow: { schema: posInt(0, 10_000_000), default: 0 },
  'compaction.hi': { schema: fraction, default: DEFAULT_THRESHOLDS.hi },
  'compaction.lo': { schema: fraction, default: DEFAULT_THRESHOLDS.lo },
  'compaction.block': { schema: fraction, default: DEFAULT_THRESHOLDS.block },
  'compaction.strategy': { schema: z.enum(STRATEGY_NAMES), default: 'token-fraction' },
  'compaction.mode': { schema: z.enum(MODE_SETTINGS), default: 'auto' },
  'compaction.blockTokens': { schema: z.union([z.literal(0), posInt(256, 131_072)]), default: 0 },
  'compaction.maxConcurrency': { schema: posInt(1, 256), default: 64 },
  'compaction.layout': { schema: z.enum(LAYOUT_SETTINGS), default: 'auto' },
  'compaction.endpoints': { schema: z.array(url), default: [] as string[] },
  'compaction.profile': { schema: z.string().trim(), default: '' },
  'compaction.maxAgentSlowdown': { schema: z.number().min(1).max(10), default: 1.5 },
  'compaction.verbosity': { schema: z.enum(VERBOSITIES), default: 'detailed' },
  'compaction.async': { schema: z.boolean(), default: true },
  'compaction.idleMinutes': {
    schema: z
      .number()
      .min(0)
      .max(24 * 60),
    default: 5,
  },
  'compaction.endpoint': { schema: optionalUrl, default: '' },
  'compaction.model': { schema: z.string().trim(), default: '' },
  'judge.enabled': { schema: z.boolean(), default: true },
  'judge.threshold': { schema: z.number().min(0).max(10), default: 7 },
  'judge.endpoint': { schema: optionalUrl, default: '' },
  'judge.model': { schema: z.string().trim(), default: '' },
  'agent.maxSteps': { schema: posInt(1, 1000), default: 40 },
  'agent.replyReserve': { schema: posInt(256, 131_072), default: 4096 },
  'tools.commandAllowlist': { schema: z.array(z.string().trim().min(1)), default: [] as string[] },
  'tools.commandTimeoutSeconds': { schema: posInt(1, 3600), default: 120 },
  'tools.commandEnv': {
    schema: z.array(
      z
        .string()
        .trim()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$|^\*$/, 'must be a variable name, or a prefix ending in *'),
    ),
    default: [...DEFAULT_COMMAND_ENV],
  },
  'tools.sandbox': { schema: z.enum(['auto', 'off']), default: 'auto' },
  'tools.allowNetwork': { schema: z.boolean(), default: false },
  requestTimeoutSeconds: { schema: posInt(5, 86_400), default: 600 },
  'tls.caFile': { schema: z.string().trim(), default: '' },
} as const;

export type SettingKey = keyof typeof SETTING_DEFS;
export const SETTING_SECTION = 'splitpoint';

export interface SettingsReport {
  settings: SplitpointSettings;
  /** One sentence per bad value, naming the full setting id. Empty when all is well. */
  problems: string[];
}

function describe(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/**
 * Reads every setting through `get` (undefined = unset → default) and
 * validates it. Never throws.
 */
export function readSettings(get: (key: SettingKey) => unknown): SettingsReport {
  const problems: string[] = [];
  const read = <K extends SettingKey>(key: K): z.infer<(typeof SETTING_DEFS)[K]['schema']> => {
    const def = SETTING_DEFS[key];
    const raw = get(key);
    if (raw === undefined || raw === null) return def.default as never;
    const r = def.schema.safeParse(raw);
    if (r.success) return r.data as never;
    const why = r.error.issues[0]?.message ?? 'invalid value';
    problems.push(`${SETTING_SECTION}.${key}: ${describe(raw)} is not valid (${why}); using the default ${describe(def.default)}.`);
    return def.default as never;
  };

  let thresholds: BudgetThresholds = { hi: read('compaction.hi'), lo: read('compaction.lo'), block: read('compaction.block') };
  const thresholdProblems = validateThresholds(thresholds);
  if (thresholdProblems.length > 0) {
    problems.push(
      `${SETTING_SECTION}.compaction.lo/hi/block must satisfy lo < hi < block: ${thresholdProblems.join('; ')}. ` +
        `Using the defaults ${DEFAULT_THRESHOLDS.lo} / ${DEFAULT_THRESHOLDS.hi} / ${DEFAULT_THRESHOLDS.block}.`,
    );
    thresholds = { ...DEFAULT_THRESHOLDS };
  }
  const orUndefined = (s: string) => (s === '' ? undefined : s);
  const contextWindow = read('contextWindow');
  const replyReserve = read('agent.replyReserve');
  if (contextWindow > 0 && replyReserve >= contextWindow) {
    problems.push(
      `${SETTING_SECTION}.agent.replyReserve (${replyReserve}) must be smaller than ${SETTING_SECTION}.contextWindow (${contextWindow}); ` +
        `using ${Math.floor(contextWindow / 4)}.`,
    );
  }
  const settings: SplitpointSettings = {
    endpoint: read('endpoint'),
    model: orUndefined(read('model')),
    contextWindow: contextWindow > 0 ? contextWindow : undefined,
    thresholds,
    strategy: read('compaction.strategy'),
    mode: read('compaction.mode'),
    blockTokens: read('compaction.blockTokens'),
    maxConcurrency: read('compaction.maxConcurrency'),
    layout: read('compaction.layout'),
    compactionEndpoints: [...read('compaction.endpoints')],
    perfProfile: orUndefined(read('compaction.profile')),
    maxAgentSlowdown: read('compaction.maxAgentSlowdown'),
    verbosity: read('compaction.verbosity'),
    asyncCompaction: read('compaction.async'),
    judge: { enabled: read('judge.enabled'), threshold: read('judge.threshold') },
    compactor: { endpoint: orUndefined(read('compaction.endpoint')), model: orUndefined(read('compaction.model')) },
    judgeEndpoint: { endpoint: orUndefined(read('judge.endpoint')), model: orUndefined(read('judge.model')) },
    idleMinutes: read('compaction.idleMinutes'),
    maxSteps: read('agent.maxSteps'),
    replyReserve: contextWindow > 0 && replyReserve >= contextWindow ? Math.floor(contextWindow / 4) : replyReserve,
    commandAllowlist: [...read('tools.commandAllowlist')],
    commandTimeoutSeconds: read('tools.commandTimeoutSeconds'),
    commandEnv: [...read('tools.commandEnv')],
    commandSandbox: read('tools.sandbox'),
    commandNetwork: read('tools.allowNetwork'),
    requestTimeoutSeconds: read('requestTimeoutSeconds'),
    caFile: orUndefined(read('tls.caFile')),
  };
  return { settings, problems };
}

/** The defaults, as readSettings returns them with nothing set. */
export function defaultSettings(): SplitpointSettings {
  return readSettings(() => undefined).settings;
}
