import assert from 'node:assert/strict';
import { defaultSettings } from '../../src/core/config/settings';
import { apiKeySecret, keysFor, loadRoleKeys, separateRoles } from '../../src/host/apiKeys';
import type { HostLog } from '../../src/host/log';
import { buildEndpoints } from '../../src/host/modelPorts';
import { startSimulator, type SimHandle } from '../sim/server';

const lines: string[] = [];
const log: HostLog = {
  trace: (m) => lines.push(m),
  debug: (m) => lines.push(m),
  info: (m) => lines.push(m),
  warn: (m) => lines.push(m),
  error: (m) => lines.push(m),
};

describe('API keys per role (agent, compactor, judge)', () => {
  it('a role on its own server uses its own key, else the key of the server it shares', () => {
    const s = defaultSettings();
    assert.deepEqual(
      keysFor(s, { agent: 'a', compactor: 'c', judge: 'j' }),
      { agent: 'a', compactor: 'a', judge: 'a' },
      'one server: one key',
    );
    const apart = {
      ...s,
      compactor: { endpoint: 'http://c:8000/v1', model: undefined },
      judgeEndpoint: { endpoint: 'http://c:8000/v1', model: undefined },
    };
    assert.deepEqual(
      keysFor(apart, { agent: 'a', compactor: 'c' }),
      { agent: 'a', compactor: 'c', judge: 'c' },
      'the judge shares the compactor server',
    );
    assert.deepEqual(keysFor(apart, { agent: 'a' }), { agent: 'a', compactor: 'a', judge: 'a' }, 'no key of its own: the agent key');
    assert.deepEqual(separateRoles(apart), ['agent', 'compactor', 'judge']);
    assert.deepEqual(separateRoles(s), ['agent']);
  });

  it('reads the keys from secret storage under one name per role (the agent keeps the old name)', async () => {
    const store = new Map([
      ['splitpoint.apiKey', 'k-agent'],
      ['splitpoint.apiKey.judge', 'k-judge'],
    ]);
    assert.equal(apiKeySecret('agent'), 'splitpoint.apiKey');
    assert.deepEqual(await loadRoleKeys(async (k) => store.get(k)), { agent: 'k-agent', judge: 'k-judge' });
  });

  describe('over real HTTP against two simulators with different keys', () => {
    let agentSim: SimHandle;
    let compactorSim: SimHandle;
    before(async () => {
      agentSim = await startSimulator({ timeScale: 0, apiKey: 'agent-secret-1' });
      compactorSim = await startSimulator({ timeScale: 0, apiKey: 'compactor-secret-2' });
    });
    after(async () => {
      await agentSim?.close();
      await compactorSim?.close();
    });

    it('the agent and the compactor each authenticate to their own server; keys never reach the log', async () => {
      const s = {
        ...defaultSettings(),
        endpoint: agentSim.url,
        compactor: { endpoint: compactorSim.url, model: undefined },
        requestTimeoutSeconds: 10,
      };
      const ep = buildEndpoints(s, { agent: 'agent-secret-1', compactor: 'compactor-secret-2' }, log, () => undefined);
      const req = { messages: [{ role: 'user' as const, content: 'Say OK.' }], maxTokens: 4, stream: false };
      await ep.agent.chat(req);
      await ep.compactor.chat(req);
      await ep.judge.chat(req);
      // With only the agent's key, the compactor's server refuses.
      const shared = buildEndpoints(s, 'agent-secret-1', log, () => undefined);
      await assert.rejects(() => shared.compactor.chat(req), /401|Unauthorized|API key/i);
      assert.ok(!lines.join('\n').includes('secret-'), 'no key in the log');
    });
  });
});
