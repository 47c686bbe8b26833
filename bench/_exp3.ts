import { loadTiktokenCounter } from '../src/core/tokens/tiktokenCounter';
import { TokenLedger } from '../src/core/tokens/tokenLedger';
import { startSimulator } from '../test/sim';
import { runCompaction, sessionWithHead, WINDOW } from './compactionRuns';
void (async () => {
  const ledger = new TokenLedger(await loadTiktokenCounter());
  const small = await sessionWithHead(ledger, 12_000, 4_000, 5);
  const sim = await startSimulator({ profile: 'h100-7b', timeScale: 0.1, maxModelLen: WINDOW });
  const bodies: unknown[] = [];
  const r = await runCompaction('x', [sim], small, ledger, {});
  console.log(r.choice.chosen.label, r.predictedMs, r.simulatedMs);
  for (const x of r.records)
    console.log(x.promptTokens, x.cachedTokens, x.completionTokens, x.arrival.toFixed(0), x.firstToken!.toFixed(0), x.finished!.toFixed(0));
  void bodies;
  await sim.close();
})();
