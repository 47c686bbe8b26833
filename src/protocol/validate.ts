import type { WebviewToHost } from './messages';
import { isOneOf, PIN_KINDS, STRATEGY_NAMES } from './vocabulary';

type Fields = Record<string, unknown>;
const str = (m: Fields, k: string) => typeof m[k] === 'string';
const int = (m: Fields, k: string) => typeof m[k] === 'number' && Number.isInteger(m[k]);
const strOrNull = (m: Fields, k: string) => m[k] === null || typeof m[k] === 'string';

/**
 * The shape check of every webview message type. Keyed by the union's own
 * types, so a new message type is a compile error until it has a check; the
 * host's dispatch table (src/host/webviewDispatch.ts) is keyed the same way
 * and test/unit/dispatch.test.ts holds the two key sets equal.
 */
const WEBVIEW_MESSAGE_CHECKS = {
  ready: () => true,
  visible: () => true,
  stop: () => true,
  undo: () => true,
  'clear-focus': () => true,
  'new-session': () => true,
  'open-review': () => true,
  send: (m) => str(m, 'text'),
  compact: (m) => strOrNull(m, 'focus') && (m.tailStartIndex === null || int(m, 'tailStartIndex')),
  'set-strategy': (m) => isOneOf(STRATEGY_NAMES, m.strategy),
  'block-edit': (m) => str(m, 'compactionId') && int(m, 'block') && str(m, 'text'),
  'block-regenerate': (m) => str(m, 'compactionId') && int(m, 'block') && (m.focus === undefined || str(m, 'focus')),
  'compaction-adopt': (m) => str(m, 'compactionId'),
  'compaction-cancel': (m) => str(m, 'compactionId'),
  approve: (m) => str(m, 'callId'),
  reject: (m) => str(m, 'callId') && strOrNull(m, 'reason'),
  pin: (m) => str(m, 'text') && isOneOf(PIN_KINDS, m.kind) && strOrNull(m, 'messageId'),
  unpin: (m) => str(m, 'pinId'),
  'edit-pin': (m) => str(m, 'pinId') && str(m, 'text'),
  'expand-summary': (m) => str(m, 'summaryId'),
  'switch-session': (m) => str(m, 'sessionId'),
} satisfies { [K in WebviewToHost['type']]: (m: Fields) => boolean };

/** Every webview message type, from the check table. */
export const WEBVIEW_TO_HOST_TYPES: readonly WebviewToHost['type'][] = Object.keys(WEBVIEW_MESSAGE_CHECKS) as WebviewToHost['type'][];

/**
 * A webview message is untrusted input (a compromised page could post
 * anything): check the shape before the host acts on it.
 */
export function isWebviewToHost(x: unknown): x is WebviewToHost {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Fields;
  if (typeof m.type !== 'string' || !Object.hasOwn(WEBVIEW_MESSAGE_CHECKS, m.type)) return false;
  return WEBVIEW_MESSAGE_CHECKS[m.type as WebviewToHost['type']](m);
}
