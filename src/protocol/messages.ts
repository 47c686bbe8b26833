/**
 * Messages between the extension host and the webview. Both sides import this
 * file; each union is handled with an exhaustive switch so adding a message
 * type is a compile error until every side handles it.
 */

export interface ViewSnapshot {
  sessionTitle: string;
  messageCount: number;
  totalTokens: number | null;
  contextWindow: number | null;
}

/** Host → webview. */
export type HostToWebview = { type: 'snapshot'; snapshot: ViewSnapshot };

/** Webview → host. */
export type WebviewToHost = { type: 'ready' } | { type: 'visible' };

export function isWebviewToHost(x: unknown): x is WebviewToHost {
  if (typeof x !== 'object' || x === null) return false;
  const t = (x as { type?: unknown }).type;
  return t === 'ready' || t === 'visible';
}
