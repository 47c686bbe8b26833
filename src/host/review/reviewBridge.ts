/**
 * Turns what the host tells the side bar into what the review editor needs,
 * and the editor's requests into the host's own webview messages, so the
 * editor drives exactly the code paths the side bar does. Pure (no vscode):
 * the unit tests run it in plain Node.
 */
import type { CompactionView, HostToWebview, ViewSnapshot, WebviewToHost } from '../../protocol/messages';
import type { HostToReview, LossReportView, PlanView, ReviewState, ReviewToHost } from '../../protocol/review';
import { applyBlockProgress, applySplitChange } from '../../protocol/messages';
import { fidelityLoss } from './fidelityLoss';
import { identifierLoss } from './identifierLoss';
import { type FullText, withFullTexts } from './lossSources';

/** Computes the loss report of a compaction; the fidelity module's version is plugged in here when present. */
export type LossFn = (messages: ReviewState['messages'], c: CompactionView) => LossReportView;
/** The planner's plan for a compaction, when it published one. */
export type PlanFn = (c: CompactionView) => PlanView | null;

export class ReviewBridge {
  private state: ReviewState | null = null;

  constructor(
    private readonly loss: LossFn = lossWithFallback,
    private readonly plan: PlanFn = planOf,
  ) {}

  get current(): ReviewState | null {
    return this.state;
  }

  /** A full state from a snapshot (on open, reload, or a new session). */
  fromSnapshot(s: ViewSnapshot): HostToReview {
    this.state = {
      sessionId: s.session.id,
      sessionTitle: s.session.title,
      messages: s.messages,
      gauge: s.gauge,
      split: s.split,
      compaction: s.compaction,
      loss: null,
      plan: null,
      focus: s.focus,
    };
    this.derive();
    return { type: 'review-state', state: this.state };
  }

  /** What the editor should get for a message the host posted to the side bar; null when nothing it shows changed. */
  onHostPost(msg: HostToWebview): HostToReview | null {
    if (msg.type === 'snapshot') return this.fromSnapshot(msg.snapshot);
    const s = this.state;
    if (!s) return null;
    switch (msg.type) {
      case 'message-added':
        s.messages = [...s.messages.filter((m) => m.index < msg.message.index), msg.message];
        s.gauge = msg.gauge;
        s.split = applySplitChange(s.split, msg.split);
        return { type: 'review-state', state: s };
      case 'split':
        s.split = msg.split;
        return { type: 'review-state', state: s };
      case 'compaction':
        s.compaction = msg.compaction;
        if (msg.compaction?.focus !== undefined) s.focus = msg.compaction.focus ?? s.focus;
        this.derive();
        return { type: 'review-state', state: s };
      case 'block': {
        const c = s.compaction;
        if (!c || c.id !== msg.compactionId) return null;
        const before = c.blocks.find((b) => b.index === msg.block.index);
        s.compaction = { ...c, blocks: c.blocks.map((b) => (b.index === msg.block.index ? msg.block : b)) };
        // Streaming progress changes no summary text: the loss report stands.
        if (before?.summary !== msg.block.summary) this.derive();
        return { type: 'review-block', compactionId: c.id, block: msg.block, loss: s.loss };
      }
      case 'block-progress': {
        const c = s.compaction;
        if (!c || c.id !== msg.compactionId) return null;
        s.compaction = { ...c, blocks: applyBlockProgress(c.blocks, msg.progress) };
        return { type: 'review-progress', compactionId: c.id, progress: msg.progress };
      }
      case 'notice':
        return { type: 'review-notice', level: msg.level, text: msg.text };
      case 'assistant-delta':
      case 'assistant-reset':
      case 'agent-state':
      case 'agent-waiting':
      case 'approval-requested':
      case 'approval-resolved':
      case 'pins':
      case 'archived':
        return null;
    }
  }

  private derive(): void {
    const s = this.state!;
    const c = s.compaction;
    s.loss = c && c.state !== 'adopted' && c.state !== 'cancelled' ? this.loss(s.messages, c) : null;
    s.plan = c ? this.plan(c) : null;
  }
}

/** The editor's bridge: its loss report judges the session's whole texts, where the snapshot's tool outputs are cut. */
export function bridgeOnFullTexts(fullTexts: () => FullText): ReviewBridge {
  return new ReviewBridge((messages, c) => lossWithFallback(withFullTexts(messages, fullTexts()), c));
}

/** The host message that carries out an editor request; `ready` is answered by the panel itself. */
export function hostMessageFor(msg: ReviewToHost): WebviewToHost | null {
  switch (msg.type) {
    case 'review-ready':
      return null;
    case 'review-compact':
      return { type: 'compact', focus: msg.focus, tailStartIndex: null };
    case 'review-edit':
      return { type: 'block-edit', compactionId: msg.compactionId, block: msg.block, text: msg.text };
    case 'review-regenerate':
      return { type: 'block-regenerate', compactionId: msg.compactionId, block: msg.block, ...(msg.focus ? { focus: msg.focus } : {}) };
    case 'review-adopt':
      return { type: 'compaction-adopt', compactionId: msg.compactionId };
    case 'review-cancel':
      return { type: 'compaction-cancel', compactionId: msg.compactionId };
    case 'review-pin':
      return { type: 'pin', text: msg.text, kind: 'constraint', messageId: msg.messageId };
  }
}

/** Without a planner's prediction: the measured wall time alone, once known. */
export function measuredOnly(c: CompactionView): PlanView | null {
  if (!c.totals) return null;
  return {
    compactionId: c.id,
    mode: '',
    layout: '',
    blockTokens: null,
    concurrency: null,
    predictedMs: null,
    measuredMs: c.totals.wallMs,
    candidates: [],
  };
}

/** The fidelity module's report; identifiers alone if it throws on some input, so the editor never loses its report. */
export function lossWithFallback(messages: ReviewState['messages'], c: CompactionView): LossReportView {
  try {
    return fidelityLoss(messages, c);
  } catch {
    return identifierLoss(messages, c);
  }
}

/** The planner's choice with predicted and measured time; the measured time alone when no planner ran. */
export function planOf(c: CompactionView): PlanView | null {
  const p = c.plan;
  if (!p) return measuredOnly(c);
  const o = p.chosen;
  return {
    compactionId: c.id,
    mode: o.mode,
    layout: o.layout,
    blockTokens: o.mode === 'sequential' ? null : o.blockTokens,
    concurrency: o.mode === 'sequential' ? null : o.concurrency,
    predictedMs: o.predictedMs,
    measuredMs: p.measuredMs ?? c.totals?.wallMs ?? null,
    candidates: [o, ...p.alternatives].map((a) => ({
      label: a.excluded ? `${a.label} (ruled out: ${a.excluded})` : a.label,
      predictedMs: a.predictedMs,
      chosen: a === o,
    })),
  };
}
