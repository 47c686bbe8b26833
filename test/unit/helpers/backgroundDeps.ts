import type { ModelPort } from '../../../src/core/ports';
import { unlimited } from '../../../src/core/ports';
import type { ServerLoad } from '../../../src/core/perf/serverLoad';
import { SessionStore } from '../../../src/core/session/sessionStore';
import { CharEstimateCounter } from '../../../src/core/tokens/tokenCounter';
import { TokenLedger } from '../../../src/core/tokens/tokenLedger';
import { FakeModel } from './fakeModel';
import { counterIds, fixedClock, MemoryStorage } from './memoryStorage';

/** A session of `pairs` long question/answer pairs after a system prompt, in memory. */
export async function history(pairs: number): Promise<SessionStore> {
  const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s/w.jsonl');
  await store.append({ role: 'system', content: 'You are a test agent.' });
  for (let i = 0; i < pairs; i++) {
    await store.append({ role: 'user', content: `question ${i} ${'lorem ipsum '.repeat(60)}` });
    await store.append({ role: 'assistant', content: `answer ${i} ${'dolor sit amet '.repeat(60)}` });
  }
  return store;
}

/** What a BackgroundCompaction needs, on fake models and without limits; `over` replaces any of it. */
export function backgroundDeps(
  store: SessionStore,
  over: { compactor?: ModelPort; judge?: ModelPort; serverLoad?: () => readonly ServerLoad[] } = {},
) {
  const compactor = over.compactor ?? new FakeModel();
  return {
    store,
    ledger: new TokenLedger(new CharEstimateCounter()),
    compactor,
    compactorLimiter: unlimited,
    judge: over.judge ?? compactor,
    clock: fixedClock(),
    ids: counterIds(),
    emit: () => undefined,
    ...(over.serverLoad ? { serverLoad: over.serverLoad } : {}),
  };
}
