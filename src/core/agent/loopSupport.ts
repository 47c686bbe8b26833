import { parseContextOverflow, type ContextOverflow } from '../overflowError';

/** Thrown inside the loop when the user stops it; the loop reports `cancelled`, not an error. */
export class Cancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

/** The server's context-length refusal, from a typed client error or from its message text. */
export function isOverflow(err: unknown): Pick<ContextOverflow, 'window' | 'input' | 'inputAtLeast'> | undefined {
  const e = err as { kind?: unknown; window?: unknown; input?: unknown; inputAtLeast?: unknown; message?: unknown };
  if (e && e.kind === 'context-overflow' && typeof e.window === 'number')
    return {
      window: e.window,
      input: typeof e.input === 'number' ? e.input : undefined,
      ...(typeof e.inputAtLeast === 'number' ? { inputAtLeast: e.inputAtLeast } : {}),
    };
  return typeof e?.message === 'string' ? parseContextOverflow(e.message) : undefined;
}

/** Waits for a promise unless the signal fires first. */
export function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Cancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
