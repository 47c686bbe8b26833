import { createInterface } from 'node:readline/promises';
import { basename, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { promises as fs } from 'node:fs';
import { AgentLoop } from '../core/agent/agentLoop';
import type { AgentEvent, AgentEventTable } from '../core/agent/events';
import { onAgentEvent, windowCorrectionText } from '../core/agent/events';
import { pinTool } from '../core/agent/pinTool';
import { recallTool } from '../core/agent/recall';
import { agentSystemPrompt } from '../core/agent/systemPrompt';
import type { ApprovalPort } from '../core/agent/tools';
import { ToolRegistry } from '../core/agent/tools';
import { DEFAULT_COMPACTION_SETTINGS } from '../core/compaction/plan';
import { isSessionLog, SessionStore } from '../core/session/sessionStore';
import { randomIds, systemClock } from '../core/session/storage';
import { STRATEGY_NAMES } from '../core/splitPoint';
import type { StrategyName } from '../core/splitPoint';
import { loadTiktokenCounter } from '../core/tokens/tiktokenCounter';
import { TokenLedger } from '../core/tokens/tokenLedger';
import { DEFAULT_THRESHOLDS, promptRoom, validateThresholds } from '../core/triggers';
import { NodeFileStorage } from '../node/fileStorage';
import { fileSpill, nodeWorkspaceTools } from '../node/tools';
import { DEFAULT_COMMAND_ENV } from '../core/config/commandEnvDefaults';
import { escapeControls } from '../protocol/commandText';
import { intOption, oneOf, parseCommandArgs, requireString, UsageError } from './args';
import { ENDPOINT_HELP, ENDPOINT_OPTIONS, connect } from './endpoint';
import { defaultLogPath } from './importCommand';
import type { CliIO } from './io';
import { cliReplyReserve, cliTargetFraction } from './cliDefaults';

export const RUN_HELP = `splitpoint run --endpoint URL --workspace DIR --task TEXT [options]

  Runs the agent headless on a workspace, with compaction on. Writes and
  commands stay inside DIR and need approval: interactive on a terminal,
  all approved with --yes, all rejected otherwise.

${ENDPOINT_HELP}
  --max-steps N       stop after N model calls (default 40)
  --session FILE      session log to create or continue (default: a new file in the temp folder)
  --strategy S        ${STRATEGY_NAMES.join(' | ')} (default token-fraction)
  --hi X --lo X --block X   budget thresholds as fractions of the prompt's room, the window less the
                            4,096 tokens each request reserves for the reply (0.75 / 0.4 / 0.95); a trigger's
                            line gives the context's fullness as a fraction of that room, then of the window
  --no-async          compact only synchronously, at the block threshold
  --no-judge          adopt background summaries without the judge
  --allow CMD         a command that needs no approval (repeatable; its words are a prefix of the command's,
                      and options that write files or paths outside DIR still ask)
  --command-env NAME  an environment variable commands get (repeatable; replaces the default list
                      ${DEFAULT_COMMAND_ENV.slice(0, 8).join(' ')} …; NAME* passes a prefix)
  --no-sandbox        run commands unconfined even where bubblewrap (bwrap) is available
  --allow-network     let sandboxed commands use the network
  --yes               approve every write and command
  --json              one JSON event per line on stdout

  After a compaction is adopted, "splitpoint inspect --session FILE --summary"
  prints the summary in force and what it replaces.`;

const OPTIONS = {
  ...ENDPOINT_OPTIONS,
  workspace: { type: 'string' },
  task: { type: 'string' },
  'max-steps': { type: 'string' },
  session: { type: 'string' },
  strategy: { type: 'string' },
  hi: { type: 'string' },
  lo: { type: 'string' },
  block: { type: 'string' },
  'no-async': { type: 'boolean', default: false },
  'no-judge': { type: 'boolean', default: false },
  allow: { type: 'string', multiple: true },
  'command-env': { type: 'string', multiple: true },
  'no-sandbox': { type: 'boolean', default: false },
  'allow-network': { type: 'boolean', default: false },
  yes: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;

function fraction(v: string | undefined, flag: string, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!(n > 0 && n <= 1)) throw new UsageError(`${flag} must be a fraction in (0, 1], got ${v}`);
  return n;
}

export async function runCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs(argv, OPTIONS);
  const workspace = resolve(requireString(values.workspace, '--workspace'));
  const task = requireString(values.task, '--task');
  const stat = await fs.stat(workspace).catch(() => undefined);
  if (!stat?.isDirectory()) throw new UsageError(`--workspace ${workspace} is not a folder`);
  const strategy = oneOf<StrategyName>(values.strategy, STRATEGY_NAMES, '--strategy', 'token-fraction');
  const thresholds = {
    hi: fraction(values.hi, '--hi', DEFAULT_THRESHOLDS.hi),
    lo: fraction(values.lo, '--lo', DEFAULT_THRESHOLDS.lo),
    block: fraction(values.block, '--block', DEFAULT_THRESHOLDS.block),
  };
  const problems = validateThresholds(thresholds);
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  const maxSteps = intOption(values['max-steps'], '--max-steps', 40);

  const storage = new NodeFileStorage('splitpoint run');
  const sessionPath = values.session ? resolve(values.session) : join(tmpdir(), `splitpoint-run-${Date.now()}.jsonl`);
  // Checked before connecting and before opening for writing, so nothing (not even a backup) is written next to it.
  const existing = await storage.read(sessionPath);
  if (existing !== undefined && !isSessionLog(existing)) throw new Error(notASessionLog(sessionPath, existing));

  const endpoint = await connect(values, io);
  const deps = { storage };
  const store = (await storage.exists(sessionPath))
    ? await SessionStore.open(deps, sessionPath)
    : await SessionStore.create(deps, sessionPath, task.slice(0, 80));
  if (store.snapshot.messages.length === 0) await store.append({ role: 'system', content: agentSystemPrompt(basename(workspace)) });

  const ledger = new TokenLedger(await loadTiktokenCounter());
  const workspaceTools = nodeWorkspaceTools(workspace, {
    allowlist: values.allow ?? [],
    commandEnv: values['command-env'] ?? DEFAULT_COMMAND_ENV,
    sandbox: { mode: values['no-sandbox'] ? 'off' : 'auto', allowNetwork: values['allow-network'] },
  });
  const spill = fileSpill(`${sessionPath}.spill`);
  const tools = new ToolRegistry([...workspaceTools, recallTool(() => store.archived(), spill), pinTool(store, randomIds, systemClock)]);
  const loop = new AgentLoop(
    {
      store,
      ledger,
      model: endpoint.client,
      compactor: endpoint.client,
      compactorLimiter: endpoint.limiter,
      judge: endpoint.client,
      tools,
      approvals: approvals(values.yes),
      spill,
      clock: systemClock,
      ids: randomIds,
    },
    {
      contextWindow: endpoint.contextWindow,
      replyReserve: cliReplyReserve(endpoint.contextWindow),
      thresholds,
      strategy,
      // The summary volume is bounded so the context lands at --lo, as in the extension.
      compaction: {
        ...DEFAULT_COMPACTION_SETTINGS,
        contextWindow: endpoint.contextWindow,
        model: endpoint.model,
        targetFraction: cliTargetFraction(endpoint.contextWindow, thresholds.lo),
      },
      asyncCompaction: !values['no-async'],
      judge: { enabled: !values['no-judge'], threshold: 7, model: endpoint.model },
      maxSteps,
      agentModel: endpoint.model,
      idle: { idleMs: 5 * 60_000, minFraction: 0.5 },
    },
  );
  const view: RunView = { io, window: endpoint.contextWindow, sessionPath };
  loop.on((e) => (values.json ? io.out(JSON.stringify(e)) : describe(e, view)));
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  try {
    const outcome = await loop.send(task, controller.signal);
    // A background compaction still running when the agent answers is awaited, so its result is in the log.
    await loop.settle();
    if (!values.json) io.err(`session: ${sessionPath}`);
    return outcome.reason === 'error' ? 1 : 0;
  } finally {
    process.off('SIGINT', stop);
    await store.close();
  }
}

/**
 * Why `run --session FILE` refuses a FILE that exists but is not a session log: a plain messages array is
 * imported into a log first (run appends to its session, and would otherwise report the array as damaged).
 */
function notASessionLog(path: string, text: string): string {
  let json = true;
  try {
    JSON.parse(text);
  } catch {
    json = false;
  }
  const log = defaultLogPath(path);
  return json
    ? `${path} is not a Splitpoint session log (a plain messages array?); run only continues session logs. ` +
        `Import it first: \`splitpoint import ${path}\` writes ${log}; then run with --session ${log}. ${path} was left as it is.`
    : `${path} is neither a Splitpoint session log nor a JSON messages array (its first line is not a session header); ` +
        `pass a session log, or a new file name to start one. ${path} was left as it is.`;
}

function approvals(yes: boolean): ApprovalPort {
  if (yes) return { request: async () => ({ approved: true }) };
  if (!process.stdin.isTTY)
    return { request: async () => ({ approved: false, reason: 'no terminal to ask on (pass --yes to approve writes and commands)' }) };
  return {
    async request(call) {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        const answer = await rl.question(approvalPrompt(call.summary));
        return /^y(es)?$/i.test(answer.trim()) ? { approved: true } : { approved: false, reason: 'rejected at the prompt' };
      } finally {
        rl.close();
      }
    },
  };
}

/** The terminal question for an approval: control characters in the summary (the command) are shown escaped, never run by the terminal. */
export function approvalPrompt(summary: string): string {
  return `Allow ${escapeControls(summary)}? [y/N] `;
}

/** What describe needs besides the event: where to print, the window in use (the server may correct it), the log. */
interface RunView {
  io: CliIO;
  window: number;
  sessionPath: string;
}

/**
 * How full the context was when a trigger fired. The thresholds are fractions of the prompt's room (the window less
 * the reply reserve), and so is the figure given first; the event's own fraction is of the whole window. A reactive
 * trigger's is of the window the server said it has, which no threshold is a fraction of.
 */
function triggerFullness(e: { trigger: string; usedFraction: number }, window: number): string {
  const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
  if (e.trigger === 'reactive') return `${pct(e.usedFraction)} of the server's window`;
  const reserve = cliReplyReserve(window);
  const room = promptRoom(window, reserve);
  return (
    `${pct((e.usedFraction * window) / room)} of the prompt's room ` +
    `(the ${window}-token window less ${reserve} for the reply; ${pct(e.usedFraction)} of the window)`
  );
}

/** A path as the shell takes it: quoted when it has anything but the characters paths mostly have. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** What the headless run prints for each agent event (a table, so a new event type is a compile error here). */
const DESCRIBE: AgentEventTable<RunView> = {
  'assistant-message': (e, { io }) => {
    if (e.message.content) io.out(e.message.content);
  },
  'tool-call': (e, { io }) => io.err(`→ ${e.call.function.name} ${e.call.function.arguments.slice(0, 160)}`),
  'tool-result': (e, { io }) => {
    if (e.isError) io.err(`  ! ${(e.message.content ?? '').split('\n')[0]}`);
  },
  'trigger-fired': (e, { io, window }) =>
    io.err(`[compaction trigger: ${e.trigger} at ${triggerFullness(e, window)}${e.detail ? `, ${e.detail}` : ''}]`),
  'compaction-started': (e, { io }) =>
    io.err(`[compaction ${e.compactionId} started${e.background ? ' in the background' : ''}${e.focus ? `, focus: ${e.focus}` : ''}]`),
  'judge-verdict': (e, { io }) =>
    io.err(
      e.verdict.kind === 'scored'
        ? `[judge: ${e.verdict.overall}/10 ${e.verdict.accepted ? 'accepted' : 'rejected'} — ${e.verdict.diagnosis}]`
        : `[judge: ${e.verdict.message}]`,
    ),
  'compaction-adopted': (e, { io, sessionPath }) => {
    io.err(`[compaction adopted: ${e.tokensBefore} → ${e.tokensAfter} tokens]`);
    io.err(`  the summary: splitpoint inspect --session ${shellWord(sessionPath)} --summary`);
  },
  'compaction-fallback': (e, { io }) => io.err(`[compaction fallback: ${e.reason}]`),
  'compaction-held': (e, { io }) => io.err(`[compaction held: ${e.reason}]`),
  'compaction-failed': (e, { io }) => io.err(`[compaction failed: ${e.error}]`),
  'waiting-for-compaction': (_e, { io }) => io.err('[waiting for compaction: the context is full]'),
  'judging-held-compaction': (_e, { io }) => io.err('[judging the summary held while idle against the new message]'),
  error: (e, { io }) => io.err(`error: ${e.error}`),
  notice: (e, { io }) => io.err(e.text),
  'window-corrected': (e, view) => {
    view.window = e.window;
    view.io.err(windowCorrectionText(e));
  },
  'reply-reset': (e, { io }) => io.err(`[the reply failed partway; asked for again (attempt ${e.attempt}): ${e.reason}]`),
  // Streaming, progress and bookkeeping: the final messages above say it.
  'step-started': (e, view) => {
    view.window = e.window;
  },
  'assistant-delta': () => undefined,
  'reasoning-delta': () => undefined,
  'tool-approval': () => undefined,
  compaction: () => undefined,
  'compaction-amending': () => undefined,
  'compaction-superseded': () => undefined,
  done: () => undefined,
};

function describe(e: AgentEvent, view: RunView): void {
  onAgentEvent(DESCRIBE, e, view);
}
