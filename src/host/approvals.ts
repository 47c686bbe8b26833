import type { ApprovalDecision, ApprovalPort } from '../core/agent/tools';
import type { ApprovalView, HostToWebview } from '../protocol/messages';

/**
 * The agent's ApprovalPort in the extension: each request becomes an
 * `approval-requested` card in the webview and waits for its Approve/Reject
 * (or for Stop). Pure: the host injects how to preview a call (diff, command
 * text) and what else to do when one is asked (open the diff editor, notify
 * when the view is hidden).
 */
export interface ApprovalCall {
  id: string;
  tool: string;
  args: Record<string, unknown>;
  summary: string;
}

/**
 * What the previewer says about a call. `detail` fills the card; `data` is
 * kept and handed back to the tool on approval so it applies exactly what the
 * user saw. `noop` skips the question for calls that cannot change anything
 * (an edit whose old_text is missing fails the same way when it runs).
 */
export type ApprovalPreview = { kind: 'ask'; detail: Omit<ApprovalView, 'callId' | 'tool'>; data?: unknown } | { kind: 'noop' };

export interface ApprovalBrokerOptions {
  post: (msg: HostToWebview) => void;
  preview: (call: ApprovalCall) => Promise<ApprovalPreview>;
  /** Called after the card is posted (open the diff editor, show a notification). */
  onAsked?: (view: ApprovalView) => void;
  /** Called when a card is answered or withdrawn (close what onAsked opened). */
  onResolved?: (callId: string) => void;
}

interface Waiting {
  view: ApprovalView;
  data: unknown;
  resolve: (d: ApprovalDecision) => void;
}

export class ApprovalBroker implements ApprovalPort {
  private readonly waiting = new Map<string, Waiting>();
  private readonly approved = new Map<string, unknown>();

  constructor(private readonly o: ApprovalBrokerOptions) {}

  /** Open cards, oldest first, for the snapshot. */
  get views(): ApprovalView[] {
    return [...this.waiting.values()].map((w) => w.view);
  }

  async request(call: ApprovalCall, signal: AbortSignal): Promise<ApprovalDecision> {
    if (signal.aborted) return { approved: false, reason: 'the user stopped the agent' };
    let preview: ApprovalPreview;
    try {
      preview = await this.o.preview(call);
    } catch (err) {
      // A preview that cannot be built is shown as such; the user still decides.
      preview = { kind: 'ask', detail: { summary: `${call.summary} (no preview: ${(err as Error).message})` } };
    }
    if (preview.kind === 'noop') return { approved: true };
    if (signal.aborted) return { approved: false, reason: 'the user stopped the agent' };
    const view: ApprovalView = { callId: call.id, tool: call.tool, ...preview.detail };
    return new Promise<ApprovalDecision>((resolve) => {
      const onAbort = () => this.finish(call.id, { approved: false, reason: 'the user stopped the agent' });
      this.waiting.set(call.id, {
        view,
        data: preview.kind === 'ask' ? preview.data : undefined,
        resolve: (d) => {
          signal.removeEventListener('abort', onAbort);
          resolve(d);
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.o.post({ type: 'approval-requested', approval: view });
      this.o.onAsked?.(view);
    });
  }

  /** The webview's Approve. Returns false for an unknown or already answered call. */
  approve(callId: string): boolean {
    return this.finish(callId, { approved: true });
  }

  reject(callId: string, reason: string | null): boolean {
    return this.finish(callId, { approved: false, reason: reason?.trim() ? reason.trim() : 'the user rejected it' });
  }

  /** Withdraws every open card (session switch, dispose). */
  rejectAll(reason: string): void {
    for (const id of [...this.waiting.keys()]) this.finish(id, { approved: false, reason });
  }

  /**
   * The approved preview data for a call, once: tools call this before they
   * write, and refuse to write without it.
   */
  takeApproved(callId: string): { approved: boolean; data: unknown } {
    if (!this.approved.has(callId)) return { approved: false, data: undefined };
    const data = this.approved.get(callId);
    this.approved.delete(callId);
    return { approved: true, data };
  }

  private finish(callId: string, d: ApprovalDecision): boolean {
    const w = this.waiting.get(callId);
    if (!w) return false;
    this.waiting.delete(callId);
    if (d.approved) this.approved.set(callId, w.data);
    w.resolve(d);
    this.o.post({ type: 'approval-resolved', callId, approved: d.approved });
    this.o.onResolved?.(callId);
    return true;
  }
}
