import assert from 'node:assert/strict';
import { checkConnection } from '../../src/host/onboarding/connectionCheck';
import { startSimulator, type SimHandle } from '../sim/server';

describe('walkthrough: server connection check (real HTTP against the simulator)', () => {
  let sim: SimHandle | undefined;
  afterEach(async () => {
    await sim?.close();
    sim = undefined;
  });

  it('reports the model, the window, exact counts, native tool calls and prefix caching', async () => {
    sim = await startSimulator({ timeScale: 0, model: 'qwen-sim', maxModelLen: 32768 });
    const r = await checkConnection(sim.url);
    assert.deepEqual(r.problems, []);
    assert.equal(r.ok, true);
    assert.equal(r.model, 'qwen-sim');
    assert.equal(r.window, 32768);
    assert.ok(r.tokenizeCount !== null && r.tokenizeCount > 0);
    assert.equal(r.toolCalls, 'native');
    assert.equal(r.prefixCaching, 'on');
    assert.match(r.lines.join('\n'), /Model: qwen-sim[\s\S]*32,768 tokens[\s\S]*Tool calls: native[\s\S]*Prefix caching: on/);
  });

  it('says when the server has no tool-call parser and no prefix caching', async () => {
    sim = await startSimulator({ timeScale: 0, toolParser: false, prefixCaching: false });
    const r = await checkConnection(sim.url);
    assert.equal(r.toolCalls, 'text-fallback');
    assert.equal(r.prefixCaching, 'off');
    assert.match(r.lines.join('\n'), /--tool-call-parser[\s\S]*--enable-prefix-caching/);
  });

  it('names a configured model the server does not serve, and an unreachable server, with what to do', async () => {
    sim = await startSimulator({ timeScale: 0, model: 'qwen-sim' });
    const wrong = await checkConnection(sim.url, { model: 'llama' });
    assert.equal(wrong.ok, false);
    assert.match(wrong.problems[0]!, /"llama" is not served here; the server has qwen-sim/);
    const url = sim.url;
    await sim.close();
    sim = undefined;
    const down = await checkConnection(url, { timeoutMs: 2000 });
    assert.equal(down.ok, false);
    assert.match(down.problems[0]!, /Cannot reach .*Start the server/);
  });
});
