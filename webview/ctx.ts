import type { Model } from './model';
import type { Projection } from './projection';
import type { UiState } from './vscodeApi';

/** What the views share: the model, the UI state, and a few cross-view actions. */
export interface Ctx {
  model: Model;
  ui: UiState;
  save(now?: boolean): void;
  /** Where the handle is: the dragged position or the strategy's choice. */
  tail(): number;
  /** The dragged position when it differs from the strategy's choice, else null (a compaction then takes the strategy's). */
  movedTail(): number | null;
  /** Moves the handle (already snapped); repaints handle + gauges synchronously. */
  setTail(tail: number | null): void;
  projection(): Projection;
  selectMessage(index: number, opts?: { reveal?: boolean; focusChat?: boolean }): void;
  selectBlock(index: number | null): void;
  expandSummary(id: string): void;
  notify(level: 'info' | 'warning' | 'error', text: string): void;
  pinText(text: string, messageId: string | null): void;
}
