import type { ReviewToHost } from '../../src/protocol/review';

/** UI state of the review editor (never session state); VS Code keeps it across reloads. */
export interface ReviewUi {
  selected: number;
  /** Summaries replaced by "dropped", by `${compactionId}:${block}`, so Keep can restore them. */
  dropped: Record<string, string>;
  /** Blocks the reviewer accepted, by key, with the summary they accepted (a changed summary needs a new look). */
  accepted: Record<string, string>;
  /** Unsaved edits by `${compactionId}:${block}`. */
  drafts: Record<string, string>;
  scrollTop: number;
}

export const DEFAULT_REVIEW_UI: ReviewUi = { selected: 0, dropped: {}, accepted: {}, drafts: {}, scrollTop: 0 };

interface Api {
  postMessage(msg: ReviewToHost): void;
  getState(): unknown;
  setState(s: unknown): void;
}
declare function acquireVsCodeApi(): Api;

let api: Api | null = null;
function vscode(): Api {
  api ??=
    typeof acquireVsCodeApi === 'function'
      ? acquireVsCodeApi()
      : { postMessage: () => undefined, getState: () => undefined, setState: () => undefined };
  return api;
}

export function post(msg: ReviewToHost): void {
  vscode().postMessage(msg);
}

export function loadUi(): ReviewUi {
  const raw = vscode().getState();
  if (typeof raw !== 'object' || raw === null) return structuredClone(DEFAULT_REVIEW_UI);
  return { ...structuredClone(DEFAULT_REVIEW_UI), ...(raw as Partial<ReviewUi>) };
}

export function saveUi(ui: ReviewUi): void {
  vscode().setState(ui);
}
