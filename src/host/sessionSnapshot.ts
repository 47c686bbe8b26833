import { viewVersion } from '../core/agent/planBase';
import type { SessionStore } from '../core/session/sessionStore';
import type { TokenLedger } from '../core/tokens/tokenLedger';
import { frameEnd } from '../core/splitPoint';
import type {
  CompactionView,
  GaugeView,
  SessionListItem,
  SplitChange,
  SplitView,
  VerdictView,
  ViewMessage,
  ViewSnapshot,
} from '../protocol/messages';
import { agentSettingsFrom, windowThresholds } from './agentSettings';
import type { ControllerEnvironment } from './controllerEnvironment';
import type { ContextRef } from './contextShift';
import { gaugeView, pinView, splitView, toViewMessage } from './viewModel';

/** Everything a full snapshot is built from; the controller supplies it. */
export interface SnapshotSource {
  store: SessionStore;
  ledger: TokenLedger;
  env: ControllerEnvironment;
  /** Calibrated tokens of the active context. */
  contextTokens: number;
  verdicts: ReadonlyMap<string, VerdictView>;
  sessions: { session: SessionListItem; sessions: SessionListItem[] };
  compaction: CompactionView | null;
  agent: ViewSnapshot['agent'];
  connection: ViewSnapshot['connection'];
  trusted: boolean;
}

/** The active context as the view shows it; `whole` leaves long tool outputs uncut (see toViewMessage). */
export function viewMessages(
  store: SessionStore,
  ledger: TokenLedger,
  verdicts: ReadonlyMap<string, VerdictView>,
  o: { whole?: boolean } = {},
): ViewMessage[] {
  const active = store.active();
  const archivedCount = active.compaction && !o.whole ? store.summarised().length : 0;
  return active.messages.map((m, i) => {
    const v = toViewMessage(m, i, active.origins[i]!, ledger, o);
    if (active.origins[i] === 'summary' && active.compaction) {
      v.archivedCount = archivedCount;
      const verdict = verdicts.get(active.compaction.id);
      if (verdict) v.verdict = verdict;
    }
    return v;
  });
}

/** The active context now: the version the view's indices refer to (SplitView.version without planning a split), and its ids. */
export function contextRef(store: SessionStore): ContextRef {
  const active = store.active();
  return { version: viewVersion(store, frameEnd(active.messages)), ids: () => store.active().messages.map((m) => m.id) };
}

export function sessionGauge(contextTokens: number, env: ControllerEnvironment): GaugeView {
  return gaugeView(contextTokens, env.contextWindow, windowThresholds(env.settings, env.contextWindow));
}

export function sessionSplit(store: SessionStore, ledger: TokenLedger, env: ControllerEnvironment): SplitView {
  const active = store.active();
  const s = env.settings;
  return splitView(active.messages, ledger, {
    strategy: s.strategy,
    window: env.contextWindow,
    // The same (clamped) reserve compaction uses, so the handle starts where compaction would split.
    replyReserve: agentSettingsFrom(s, env.contextWindow).replyReserve,
    blockTokens: s.blockTokens,
    verbosity: s.verbosity,
    version: (frameEnd) => viewVersion(store, frameEnd),
    priorDepth: active.compaction?.depth ?? 0,
    lo: windowThresholds(s, env.contextWindow).lo,
  });
}

/**
 * The split as a change after a message was appended to `messages`: the allowed places can change from the appended
 * message on, or from the tool batch it answers (no place inside a batch awaiting results is allowed, see planSplit).
 */
export function splitChange(messages: readonly { role: string }[], split: SplitView): SplitChange {
  let from = messages.length - 1;
  while (from > 0 && messages[from]!.role === 'tool') from--;
  const { allowed, ...rest } = split;
  return { ...rest, allowedFrom: from, allowedAppend: allowed.filter((a) => a >= from) };
}

export function sessionSnapshot(src: SnapshotSource): ViewSnapshot {
  const { store, env } = src;
  const s = env.settings;
  return {
    session: src.sessions.session,
    sessions: src.sessions.sessions,
    messages: viewMessages(store, src.ledger, src.verdicts),
    gauge: sessionGauge(src.contextTokens, env),
    split: sessionSplit(store, src.ledger, env),
    pins: store.snapshot.pins.map(pinView),
    focus: store.snapshot.focus,
    compaction: src.compaction,
    compactionDepth: store.snapshot.compactions.length,
    agent: src.agent,
    // The header names the model the server serves when the setting leaves it to the server (never "model ?").
    settings: {
      endpoint: s.endpoint,
      model: s.model || src.connection.model || null,
      mode: s.mode,
      layout: s.layout,
      verbosity: s.verbosity,
    },
    connection: src.connection,
    trusted: src.trusted,
  };
}
