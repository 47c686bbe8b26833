/**
 * Webview messages a streamed compaction causes in the extension host (issue
 * 12, part 6: "batch UI updates per animation frame and per worker"). The
 * long session's parallel target-block compaction runs with streamed workers
 * through the real client and paced transport against the simulator (h100-7b,
 * time scale 1, one token per SSE event); its events go through the host's
 * CompactionTracker and PostCoalescer, as in the editor. Printed: the workers'
 * progress events (each was one `block` message with the whole block view
 * before the coalescer), the messages the webview gets now, and the JSON bytes
 * of both, which the host serialises for every webview that listens (the side
 * bar and, when open, the review editor); and how many webview.postMessage
 * calls carry them once the PostBatcher joins each turn's messages into one.
 *
 * Run: npm run bench -- progressMessages
 */
import { AGENT_TOOL_SPECS } from '../src/core/agent/toolSpecs';
import { createCompaction, snapshotSession } from '../src/core/compaction/fromSession';
import { DEFAULT_COMPACTION_SETTINGS } from '../src/core/compaction/plan';
import { randomIds, systemClock } from '../src/core/session/storage';
import { loadTiktokenCounter } from '../src/core/tokens/tiktokenCounter';
import { TokenLedger } from '../src/core/tokens/tokenLedger';
import { openSession } from '../src/cli/openSession';
import { CompactionTracker } from '../src/host/compactionTracker';
import { PostBatcher } from '../src/host/postBatcher';
import { PostCoalescer } from '../src/host/postCoalescer';
import { VllmClient, limiterFor } from '../src/llm';
import { createPacedFetch } from '../src/llm/pacedFetch';
import type { HostToWebview, HostToWebviewPost } from '../src/protocol/messages';
import { startSimulator } from '../test/sim';

const SESSION = 'test/fixtures/long-session.json';
const WINDOW = 131_072;

async function main(): Promise<void> {
  const sim = await startSimulator({ port: 0, profile: 'h100-7b', timeScale: 1, maxModelLen: WINDOW, streamChunkTokens: 1 });
  const paced = createPacedFetch({ intervalMs: 100 });
  try {
    const client = new VllmClient({ baseURL: sim.url, model: 'sim-model', fetch: paced });
    const { store } = await openSession(SESSION);
    const ledger = new TokenLedger(await loadTiktokenCounter());
    const snapshot = snapshotSession(store, ledger, { strategy: 'token-fraction' }, AGENT_TOOL_SPECS, {
      contextWindow: WINDOW,
      replyReserve: 4096,
    });
    const settings = { ...DEFAULT_COMPACTION_SETTINGS, mode: 'parallel', layout: 'target-block', contextWindow: WINDOW } as const;
    const pending = createCompaction(snapshot, settings, {
      model: client,
      limiter: limiterFor(sim.url, 8),
      count: (m) => ledger.estimate(m),
      clock: systemClock,
      ids: randomIds,
    });
    const tracker = new CompactionTracker({ pins: () => [], judgeEnabled: () => false });
    const sent: HostToWebview[] = [];
    const posts: HostToWebviewPost[] = [];
    // As in the editor: the coalescer's output goes through the side bar's batcher (sessionViewProvider.ts).
    const batcher = new PostBatcher((p) => posts.push(p));
    const coalescer = new PostCoalescer((m) => (sent.push(m), batcher.post(m)));
    let events = 0;
    let eventBytes = 0;
    const post = (msgs: HostToWebview[]) => msgs.forEach((m) => coalescer.post(m));
    post(tracker.start(pending.id, true, undefined, false));
    pending.on((e) => {
      post(tracker.onCompactionEvent(e));
      if (e.type !== 'block-streaming') return;
      events++;
      // What the host posted for this event before: the whole block view.
      const block = tracker.current!.blocks[e.block]!;
      eventBytes += JSON.stringify({ type: 'block', compactionId: e.compactionId, block }).length;
    });
    const t0 = performance.now();
    await pending.start();
    const wallS = (performance.now() - t0) / 1000;
    coalescer.flush();
    batcher.flush();
    const progress = sent.filter((m) => m.type === 'block-progress');
    const bytes = (ms: HostToWebview[]) => ms.reduce((n, m) => n + JSON.stringify(m).length, 0);
    const others = sent.length - progress.length;
    console.log(
      [
        `${SESSION}, parallel target-block, streamed workers (paced: 250 ms batches), simulator h100-7b, time scale 1; node ${process.version}`,
        `blocks ${pending.blocks.length}, wall ${wallS.toFixed(1)} s, summary tokens ${pending.totals().summaryTokens}`,
        `progress events (one 'block' message each before): ${events}, ${eventBytes} bytes of JSON, ${(events / wallS).toFixed(1)} per second`,
        `'block-progress' messages now:                      ${progress.length}, ${bytes(progress)} bytes of JSON, ${(progress.length / wallS).toFixed(1)} per second`,
        `blocks per progress message: median ${median(progress.map((m) => (m.type === 'block-progress' ? m.progress.length : 0)))}`,
        `other messages (snapshots, block results): ${others}`,
        `webview.postMessage calls (one per turn of the event loop): ${posts.length} for ${sent.length} messages, ` +
          `${posts.filter((p) => p.type === 'batch').length} of them batches`,
      ].join('\n'),
    );
  } finally {
    paced.close();
    await sim.close();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1] ?? 0;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
