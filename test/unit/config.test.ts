import assert from 'node:assert/strict';
import { defaultSettings, readSettings } from '../../src/core/config/settings';
import type { SettingKey } from '../../src/core/config/settings';

const from = (values: Partial<Record<SettingKey, unknown>>) => readSettings((k) => values[k]);

describe('settings reader', () => {
  it('gives the documented defaults when nothing is set', () => {
    const { settings, problems } = from({});
    assert.deepEqual(problems, []);
    assert.equal(settings.endpoint, 'http://localhost:8000/v1');
    assert.equal(settings.model, undefined, 'empty model = first from /v1/models');
    assert.equal(settings.contextWindow, undefined, '0 = max_model_len from the server');
    assert.deepEqual(settings.thresholds, { hi: 0.75, lo: 0.4, block: 0.95 });
    assert.equal(settings.strategy, 'token-fraction');
    // The planner chooses mode, layout and block size unless the user fixes them.
    assert.equal(settings.mode, 'auto');
    assert.equal(settings.blockTokens, 0);
    assert.equal(settings.layout, 'auto');
    assert.equal(settings.maxConcurrency, 64);
    assert.deepEqual(settings.compactionEndpoints, []);
    assert.equal(settings.perfProfile, undefined);
    assert.equal(settings.maxAgentSlowdown, 1.5);
    assert.equal(settings.verbosity, 'detailed');
    assert.equal(settings.asyncCompaction, true);
    assert.deepEqual(settings.judge, { enabled: true, threshold: 7 });
    assert.deepEqual(settings.compactor, { endpoint: undefined, model: undefined });
    assert.deepEqual(settings.judgeEndpoint, { endpoint: undefined, model: undefined });
    assert.deepEqual(settings.commandAllowlist, []);
    assert.deepEqual(defaultSettings(), settings);
  });

  it('accepts valid values as given', () => {
    const { settings, problems } = from({
      endpoint: 'https://gpu-box:8443/v1',
      model: ' Qwen/Qwen3-8B ',
      contextWindow: 40960,
      'compaction.hi': 0.7,
      'compaction.lo': 0.3,
      'compaction.block': 0.9,
      'compaction.strategy': 'recent-turns',
      'compaction.mode': 'sequential',
      'compaction.blockTokens': 2048,
      'compaction.maxConcurrency': 16,
      'compaction.layout': 'target-block',
      'compaction.verbosity': 'very detailed',
      'compaction.async': false,
      'compaction.endpoint': 'http://other:8001/v1',
      'compaction.model': 'small',
      'judge.enabled': false,
      'judge.threshold': 8,
      'judge.endpoint': '',
      'judge.model': 'judge-model',
      'tools.commandAllowlist': ['npm test', ' git status '],
    });
    assert.deepEqual(problems, []);
    assert.equal(settings.endpoint, 'https://gpu-box:8443/v1');
    assert.equal(settings.model, 'Qwen/Qwen3-8B', 'trimmed');
    assert.equal(settings.contextWindow, 40960);
    assert.deepEqual(settings.thresholds, { hi: 0.7, lo: 0.3, block: 0.9 });
    assert.equal(settings.strategy, 'recent-turns');
    assert.equal(settings.mode, 'sequential');
    assert.equal(settings.maxConcurrency, 16);
    assert.equal(settings.asyncCompaction, false);
    assert.deepEqual(settings.compactor, { endpoint: 'http://other:8001/v1', model: 'small' });
    assert.deepEqual(settings.judgeEndpoint, { endpoint: undefined, model: 'judge-model' });
    assert.deepEqual(settings.judge, { enabled: false, threshold: 8 });
    assert.deepEqual(settings.commandAllowlist, ['npm test', 'git status']);
  });

  it('replaces each bad value by its default and names the setting, the value and the reason', () => {
    const { settings, problems } = from({
      endpoint: 'localhost:8000',
      'compaction.strategy': 'newest-first',
      'compaction.blockTokens': 12.5,
      'compaction.maxConcurrency': 0,
      'judge.threshold': 11,
      'compaction.async': 'yes',
      'tools.commandAllowlist': 'npm test',
    });
    assert.equal(settings.endpoint, 'http://localhost:8000/v1');
    assert.equal(settings.strategy, 'token-fraction');
    assert.equal(settings.blockTokens, 0);
    assert.equal(settings.maxConcurrency, 64);
    assert.equal(settings.judge.threshold, 7);
    assert.equal(settings.asyncCompaction, true);
    assert.deepEqual(settings.commandAllowlist, []);
    assert.equal(problems.length, 7);
    const endpoint = problems.find((p) => p.startsWith('splitpoint.endpoint:'))!;
    assert.match(endpoint, /"localhost:8000"/);
    assert.match(endpoint, /http\(s\) URL/);
    assert.match(endpoint, /using the default "http:\/\/localhost:8000\/v1"/);
    assert.ok(problems.some((p) => p.startsWith('splitpoint.compaction.strategy:') && p.includes('"newest-first"')));
    assert.ok(problems.some((p) => p.startsWith('splitpoint.judge.threshold:') && p.includes('11')));
  });

  it('rejects thresholds out of order as a set, explaining lo < hi < block', () => {
    const { settings, problems } = from({ 'compaction.hi': 0.5, 'compaction.lo': 0.6, 'compaction.block': 0.9 });
    assert.deepEqual(settings.thresholds, { hi: 0.75, lo: 0.4, block: 0.95 });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /lo < hi < block/);
    assert.match(problems[0]!, /lo \(0\.6\) must be below hi \(0\.5\)/);
  });

  it('does not accept a non-http endpoint for the compactor or judge either', () => {
    const { settings, problems } = from({ 'compaction.endpoint': 'file:///etc/passwd', 'judge.endpoint': 'ftp://x' });
    assert.equal(settings.compactor.endpoint, undefined);
    assert.equal(settings.judgeEndpoint.endpoint, undefined);
    assert.equal(problems.length, 2);
  });

  it('keeps the reply reserve below the context window', () => {
    const { settings, problems } = from({ contextWindow: 2048, 'agent.replyReserve': 4096 });
    assert.equal(settings.replyReserve, 512);
    assert.match(problems[0]!, /replyReserve/);
  });

  it('never throws, whatever the configuration returns', () => {
    for (const junk of [NaN, {}, [], () => 1, Symbol('x'), -1, 1e99]) {
      const r = readSettings(() => junk);
      assert.ok(r.problems.length > 0);
      assert.deepEqual(r.settings.thresholds, { hi: 0.75, lo: 0.4, block: 0.95 });
    }
  });
});
