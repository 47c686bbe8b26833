import type { GaugeView } from '../protocol/messages';

/**
 * Texts the user sees outside the webview (notifications, status bar), as
 * pure functions so their wording and thresholds are unit-tested.
 */

export type ErrorAction = 'Open Settings' | 'Set API Key' | 'Select Model' | 'Show Log';

export interface ActionableError {
  message: string;
  actions: ErrorAction[];
  /** For 'Open Settings': the settings search query. */
  settingsQuery?: string;
}

/**
 * A connection failure as the client named it: only when nothing answers is it "cannot reach". A stream the server
 * dropped, a certificate this machine does not trust or a refused port each say so in the client's own message.
 */
function connectionFailure(err: { unreachable?: unknown; message?: unknown }, url: string): ActionableError {
  const own = typeof err.message === 'string' ? err.message : '';
  // The client's ConnectionError says which it is (src/llm/errors.ts); anything else reads as unreachable.
  if (err.unreachable !== false || !own) {
    return {
      message: `Splitpoint cannot reach the model server at ${url}. Start vLLM there, or point the splitpoint.endpoint setting at your server.`,
      actions: ['Open Settings', 'Show Log'],
      settingsQuery: 'splitpoint.endpoint',
    };
  }
  if (/splitpoint\.tls\.caFile/.test(own))
    return { message: own, actions: ['Open Settings', 'Show Log'], settingsQuery: 'splitpoint.tls.caFile' };
  return { message: own, actions: ['Show Log'] };
}

/**
 * Turns a model-client failure into a message that says what to do. `err`
 * is the typed error from src/llm when known (matched by `kind`, so no
 * import of the client is needed here), `text` the loop's error text.
 */
export function describeFailure(err: unknown, text: string, endpoint: string): ActionableError {
  const kind = (err as { kind?: unknown } | undefined)?.kind;
  const url = ((err as { url?: unknown } | undefined)?.url as string | undefined) ?? endpoint;
  switch (kind) {
    case 'connection':
      return connectionFailure(err as { unreachable?: unknown; message?: unknown }, url);
    case 'auth':
      return {
        message: `The server at ${url} rejected the API key. Set the right one with "Splitpoint: Set API Key".`,
        actions: ['Set API Key', 'Show Log'],
      };
    case 'not-found':
      return {
        message: `${text} Check the model (splitpoint.model) and the endpoint.`,
        actions: ['Select Model', 'Open Settings'],
        settingsQuery: 'splitpoint.model',
      };
    case 'timeout':
      return {
        message: `The model server at ${url} did not answer in time. It may be overloaded or still loading the model.`,
        actions: ['Show Log'],
      };
    case 'context-overflow':
      return {
        message:
          "The request is longer than the model's context window even after Splitpoint compacted and retried. " +
          'Move the split point later, lower splitpoint.compaction.block, or start a new session.',
        actions: ['Open Settings'],
        settingsQuery: 'splitpoint.compaction',
      };
    default:
      if (/too long|still exceeds/i.test(text)) {
        return { message: `${text} Splitpoint compacted the context and retried once.`, actions: ['Show Log'] };
      }
      return { message: text, actions: ['Show Log'] };
  }
}

export interface GaugeStatus {
  text: string;
  tooltip: string;
  level: 'normal' | 'warning' | 'error';
}

/**
 * The status bar item: percent of the window, coloured at hi (warning) and block (error). `background` is the
 * compaction.async setting: without it nothing starts at hi, and the agent compacts at block while it waits.
 */
export function gaugeStatus(g: GaugeView | undefined, running: boolean, background = true): GaugeStatus {
  const icon = running ? '$(loading~spin)' : '$(fold)';
  if (!g || g.window <= 0) return { text: `${icon} Splitpoint`, tooltip: 'Splitpoint: open the session view', level: 'normal' };
  const f = g.used / g.window;
  const pct = Math.round(100 * f);
  const level = f >= g.block ? 'error' : f >= g.hi ? 'warning' : 'normal';
  const tooltip = [
    `Splitpoint context: ${g.used.toLocaleString('en-US')} of ${g.window.toLocaleString('en-US')} tokens (${pct}%).`,
    background
      ? `Background compaction starts at ${Math.round(100 * g.hi)}%; the agent waits at ${Math.round(100 * g.block)}%.`
      : `Background compaction is off: at ${Math.round(100 * g.block)}% the agent waits while the context is compacted.`,
    'Click to open the session.',
  ].join('\n');
  return { text: `${icon} ${pct}%`, tooltip, level };
}
