import type { WebviewToHost } from '../src/protocol/messages';

/** UI state only (never session state): survives the view being hidden and restored. */
export interface UiState {
  chatScrollTop: number;
  follow: boolean;
  chatStart: number | null;
  selectedId: string | null;
  /** The dragged tail start, or null when the handle sits on the strategy's choice. */
  dragTail: number | null;
  /** SplitView.version the drag was placed on: indices of another version name other messages. */
  dragVersion: string | null;
  history: string[];
  draft: string;
  zoom: number;
  scrollFrac: number;
  pinKind: 'constraint' | 'open-loop' | 'note';
  selectedBlock: number | null;
  expanded: string[];
  /** The session this UI state belongs to; a different session starts fresh. */
  sessionId: string | null;
  /** Timeline and gauges expanded; null = never toggled (collapsed). */
  overviewOpen: boolean | null;
  pinsOpen: boolean;
}

export const DEFAULT_UI: UiState = {
  chatScrollTop: 0,
  follow: true,
  chatStart: null,
  selectedId: null,
  dragTail: null,
  dragVersion: null,
  history: [],
  draft: '',
  zoom: 1,
  scrollFrac: 0,
  pinKind: 'note',
  selectedBlock: null,
  expanded: [],
  sessionId: null,
  overviewOpen: null,
  pinsOpen: false,
};

interface VsCodeApi {
  postMessage(msg: WebviewToHost): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

let api: VsCodeApi | null = null;
function vscode(): VsCodeApi {
  if (!api) {
    api =
      typeof acquireVsCodeApi === 'function'
        ? acquireVsCodeApi()
        : { postMessage: (m) => console.log('[splitpoint] post', m), getState: () => undefined, setState: () => undefined };
  }
  return api;
}

export function post(msg: WebviewToHost): void {
  vscode().postMessage(msg);
}

export function loadUi(): UiState {
  const raw = vscode().getState();
  if (typeof raw !== 'object' || raw === null) return { ...DEFAULT_UI };
  return { ...DEFAULT_UI, ...(raw as Partial<UiState>) };
}

let pending = 0;
export function saveUi(ui: UiState, now = false): void {
  if (now) {
    if (pending) cancelAnimationFrame(pending);
    pending = 0;
    vscode().setState(ui);
    return;
  }
  if (pending) return;
  pending = requestAnimationFrame(() => {
    pending = 0;
    vscode().setState(ui);
  });
}
