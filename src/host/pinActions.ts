import { addPin } from '../core/agent/pinTool';
import type { SessionStore } from '../core/session/sessionStore';
import type { Clock, IdSource } from '../core/session/storage';
import type { PinView } from '../protocol/messages';

export const MAX_PIN_CHARS = 2000;

/** The user's pins from the view: add, edit, remove. The store's event updates the view. */
export class PinActions {
  constructor(
    private readonly store: SessionStore,
    private readonly ids: IdSource,
    private readonly clock: Clock,
    private readonly notice: (level: 'info' | 'warning', text: string) => void,
  ) {}

  async pin(text: string, kind: PinView['kind'], messageId: string | null): Promise<void> {
    const t = text.trim();
    if (!t) return this.notice('warning', 'Nothing to pin: the text is empty.');
    if (t.length > MAX_PIN_CHARS) {
      return this.notice('warning', `Pins are limited to ${MAX_PIN_CHARS} characters: the pinned block is sent with every request.`);
    }
    const pin = await addPin(this.store, { text: t, kind, source: 'user', ...(messageId ? { messageId } : {}) }, this.ids, this.clock);
    if (!pin) this.notice('info', 'Already pinned.');
  }

  // Both change the list as it is when their turn comes in the store's queue, not as it was read here.
  async unpin(pinId: string): Promise<void> {
    await this.store.updatePins((pins) => pins.filter((p) => p.id !== pinId));
  }

  async edit(pinId: string, text: string): Promise<void> {
    const t = text.trim();
    if (!t) return this.notice('warning', 'A pin cannot be empty; unpin it instead.');
    const next = t.slice(0, MAX_PIN_CHARS);
    await this.store.updatePins((pins) => pins.map((p) => (p.id === pinId && p.text !== next ? { ...p, text: next } : p)));
  }
}
