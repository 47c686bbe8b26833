import { windowCorrectionText, type AgentEventTable } from '../core/agent/events';
import type { AgentWaitView, CompactingDetail, VerdictView } from '../protocol/messages';
import type { HostLog } from './log';
import { verdictView } from './viewModel';

/** What the controller lets the agent-event table touch. */
export interface AgentEventSink {
  log: HostLog;
  /** The session id, prefixed to log lines. */
  sid: string;
  notice(level: 'info' | 'warning' | 'error', text: string): void;
  /** Streamed reply text so far (kept for a snapshot mid-reply), or '' to reset it. */
  streamed(text: string | null): void;
  /** The reply streamed so far is void (its request is sent again): the view drops it. */
  replyReset(): void;
  /** What the running agent now waits on (null: nothing; reply text ends a wait on its own, see streamed). */
  waiting(on: AgentWaitView['on'] | null, detail?: string): void;
  /** The turn stops for this compaction (or for the judge's check of it). */
  compacting(compactionId: string, detail?: CompactingDetail): void;
  /** The judge rejected this compaction's summary; `rewriteId` rewrites it. */
  amending(compactionId: string, rewriteId: string): void;
  /** A compaction ended; a turn that stopped for it waits on the model again. */
  compactionEnded(compactionId: string): void;
  recordVerdict(compactionId: string, verdict: VerdictView): void;
  /** The server's window is smaller than the one in use: the gauge, the status bar and later loops take it. */
  windowCorrected(window: number): void;
  /** A background result the loop let go of: the user may still adopt, edit or cancel it. */
  held(compactionId: string): void;
  error(message: string): void;
}

const pct = (f: number) => (100 * f).toFixed(0);

/**
 * What the controller does with each agent event besides the compaction view
 * (CompactionTracker): streaming text, notices and the log. Every event type
 * has an entry, so a new one is a compile error here rather than a silent drop.
 */
export const controllerAgentEvents: AgentEventTable<AgentEventSink> = {
  // Reply text ends any wait (streamed() says so; the view ends it on its own when the text comes).
  'assistant-delta': (e, s) => s.streamed(e.text),
  'reply-reset': (e, s) => {
    s.replyReset();
    s.waiting('model');
    s.notice('warning', `The reply failed partway and is asked for again (attempt ${e.attempt}): ${e.reason}`);
  },
  'assistant-message': (_e, s) => {
    s.waiting(null);
    s.streamed(null);
  },
  // Reasoning and tool results reach the view as stored messages (message-added), not as events.
  'reasoning-delta': (_e, s) => s.waiting('reasoning'),
  'tool-result': (_e, s) => s.waiting(null),
  'step-started': (e, s) => {
    s.log.debug(`[${s.sid}] step ${e.step}: ${e.contextTokens}/${e.window} tokens`);
    s.waiting('model');
  },
  'tool-call': (e, s) => {
    s.log.info(`[${s.sid}] tool ${e.call.function.name}${e.needsApproval ? ' (needs approval)' : ''}`);
    // A call that needs approval waits on the user, whom its card asks.
    s.waiting(e.needsApproval ? null : 'tool', e.call.function.name);
  },
  'tool-approval': (e, s) => {
    s.log.info(`[${s.sid}] tool call ${e.callId} ${e.approved ? 'approved' : 'rejected'}`);
    if (e.approved) s.waiting('tool', e.tool);
  },
  'trigger-fired': (e, s) => {
    s.log.info(`[${s.sid}] compaction trigger ${e.trigger} at ${pct(e.usedFraction)}% of the window`);
    if (e.trigger === 'reactive') {
      s.notice(
        'warning',
        `The server refused the request as longer than its context window (${e.detail ?? 'window unknown'}). ` +
          'Splitpoint is compacting the context and will retry once.',
      );
    }
  },
  'waiting-for-compaction': (e, s) => {
    s.notice('info', `The context is ${pct(e.usedFraction)}% full: the agent waits for the background compaction to finish.`);
    // On that compaction: its end (adopted, held, failed) sends the wait back to the model, also when a refused request
    // is retried with no new step.
    s.compacting(e.compactionId, 'background');
  },
  'judging-held-compaction': (e, s) => {
    s.log.info(`[${s.sid}] judging ${e.compactionId}, held while idle, against the new message`);
    s.compacting(e.compactionId, 'verdict');
  },
  'judge-verdict': (e, s) => {
    const v = verdictView(e.verdict, e.attempt);
    if (v) s.recordVerdict(e.compactionId, v);
    const result =
      e.verdict.kind === 'scored'
        ? `${e.verdict.overall}/10 ${e.verdict.accepted ? 'accepted' : 'rejected'}`
        : `error: ${e.verdict.message}`;
    s.log.info(`[${s.sid}] judge on ${e.compactionId} (attempt ${e.attempt}, ${e.nextSteps} next steps): ${result}`);
  },
  // The tracker shows amending and superseding in the compaction view; a turn that waits on it says so.
  'compaction-amending': (e, s) => s.amending(e.compactionId, e.rewriteId),
  'compaction-superseded': () => undefined,
  'compaction-held': (e, s) => {
    s.log.info(`[${s.sid}] compaction ${e.compactionId} held: ${e.reason}`);
    s.held(e.compactionId);
    // Held for good (the judge failed, or the user took it): a turn that waited on its verdict goes on.
    s.compactionEnded(e.compactionId);
  },
  'compaction-adopted': (e, s) => {
    s.log.info(
      `[${s.sid}] compaction ${e.compactionId} adopted: ${e.tokensBefore} → ${e.tokensAfter} tokens${e.judged ? ' (judged)' : ''}`,
    );
    s.compactionEnded(e.compactionId);
  },
  compaction: (e, s) => {
    const ev = e.event;
    if (ev.type === 'ready' || ev.type === 'adopted') {
      const t = ev.totals;
      s.log.info(
        `[${s.sid}] compaction ${ev.compactionId} ${ev.type}: ${t.headTokens} → ${t.summaryTokens} tokens (×${t.compressionRatio.toFixed(1)}), ` +
          `${t.requests} requests, max ${t.maxInFlight} in flight, ${t.inputTokens} in / ${t.outputTokens} out / ` +
          `${t.cachedTokens ?? 'unknown'} cached, ${t.wallMs} ms`,
      );
    } else if (ev.type === 'block-failed') {
      s.log.warn(`[${s.sid}] compaction ${ev.compactionId} block ${ev.block} failed: ${ev.error}`);
    }
  },
  'compaction-fallback': (e, s) => s.log.warn(`[${s.sid}] ${e.type} ${e.compactionId}: ${e.reason}`),
  'compaction-failed': (e, s) => {
    s.log.warn(`[${s.sid}] ${e.type} ${e.compactionId}: ${e.error}`);
    s.compactionEnded(e.compactionId);
  },
  'compaction-started': (e, s) => {
    s.log.info(
      `[${s.sid}] compaction ${e.compactionId} started${e.background ? ' in the background' : ''}${e.focus ? ' with a focus' : ''}`,
    );
    // Not in the background: the loop runs it before the agent goes on (reactive, block, fallback).
    if (!e.background) s.compacting(e.compactionId);
  },
  notice: (e, s) => s.notice('info', e.text),
  'window-corrected': (e, s) => {
    const text = windowCorrectionText(e);
    s.log.warn(`[${s.sid}] ${text}`);
    s.notice('warning', text);
    s.windowCorrected(e.window);
  },
  error: (e, s) => {
    s.log.error(`[${s.sid}] agent error: ${e.error}`);
    s.notice('error', e.error);
    s.error(e.error);
  },
  done: (e, s) => {
    s.log.info(`[${s.sid}] turn ended: ${e.reason} after ${e.steps} steps`);
    if (e.reason === 'max-steps') {
      s.notice('warning', `The agent stopped after ${e.steps} steps (splitpoint.agent.maxSteps). Send a message to let it continue.`);
    }
  },
};
