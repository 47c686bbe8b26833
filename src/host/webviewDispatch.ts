import type { WebviewToHost } from '../protocol/messages';
import type { SessionController } from './sessionController';

/**
 * The one table that turns webview messages into host actions. It is typed
 * with a mapped type over the protocol's union, so a message type without a
 * handler is a compile error here (test/types/dispatch.typetest.ts proves it),
 * and `HANDLED_TYPES` below is what the validator's type list is checked
 * against in the unit tests.
 */

/** Session-level actions: the host's (library, probe); a lone controller answers them itself. */
export interface SessionOps {
  /** `ready` and `visible`: refresh what the view shows and send a full snapshot. */
  showLatest(): Promise<void>;
  newSession(): Promise<void>;
  switchTo(sessionId: string): Promise<void>;
  /** Runs before a `send` reaches the controller (the host learns the server's window first). */
  beforeSend(): Promise<void>;
  /** Opens the compaction review editor (the side bar's Review button). */
  openReview(): Promise<void>;
}

export interface DispatchTarget {
  /** Read after `beforeSend`, which may have replaced the controller. */
  controller(): SessionController;
  session: SessionOps;
}

type Handler<M> = (t: DispatchTarget, msg: M) => void | Promise<void>;

/** A handler per message type of the union `U`; a missing one fails to compile. */
export type HandlerTable<U extends { type: string }> = { [K in U['type']]: Handler<Extract<U, { type: K }>> };

export const webviewHandlers = {
  ready: (t) => t.session.showLatest(),
  visible: (t) => t.session.showLatest(),
  'new-session': (t) => t.session.newSession(),
  'switch-session': (t, m) => t.session.switchTo(m.sessionId),
  send: async (t, m) => {
    await t.session.beforeSend();
    return t.controller().send(m.text);
  },
  stop: (t) => t.controller().stop(),
  compact: (t, m) => t.controller().compact(m.focus, m.tailStartIndex),
  'set-strategy': (t, m) => t.controller().setStrategy(m.strategy),
  'block-edit': (t, m) => t.controller().compactions.editBlock(m.compactionId, m.block, m.text),
  'block-regenerate': (t, m) => t.controller().compactions.regenerateBlock(m.compactionId, m.block, m.focus),
  'open-review': (t) => t.session.openReview(),
  'compaction-adopt': (t, m) => t.controller().compactions.adopt(m.compactionId),
  'compaction-cancel': (t, m) => t.controller().compactions.cancel(m.compactionId),
  undo: (t) => t.controller().compactions.undo(),
  approve: (t, m) => t.controller().approve(m.callId),
  reject: (t, m) => {
    t.controller().broker.reject(m.callId, m.reason);
  },
  pin: (t, m) => t.controller().pins.pin(m.text, m.kind, m.messageId),
  unpin: (t, m) => t.controller().pins.unpin(m.pinId),
  'edit-pin': (t, m) => t.controller().pins.edit(m.pinId, m.text),
  'expand-summary': (t, m) => t.controller().expand(m.summaryId),
  'clear-focus': (t) => t.controller().clearFocus(),
} satisfies HandlerTable<WebviewToHost>;

export const HANDLED_TYPES: readonly WebviewToHost['type'][] = Object.keys(webviewHandlers) as WebviewToHost['type'][];

export function dispatchWebview(t: DispatchTarget, msg: WebviewToHost): void | Promise<void> {
  // The table is exhaustive by its type; the cast only joins the per-type handlers into one signature.
  const handler = webviewHandlers[msg.type] as Handler<WebviewToHost>;
  return handler(t, msg);
}
