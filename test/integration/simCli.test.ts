import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VllmClient } from '../../src/llm/client';
import type { ChatMessage } from '../../src/core/messages';
import type { ToolSpec } from '../../src/llm/types';
import { parseSimArgs, runSimCli } from '../sim/cli';
import { startSimulator } from '../sim/server';

describe('simulator CLI and the cache-aligned layout', () => {
  it('runSimCli starts a server from argv (port 0, script file) and prints where it listens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-'));
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ replies: [{ content: 'scripted hello' }] }));
    const out: string[] = [];
    const sim = await runSimCli(
      ['--port', '0', '--model', 'cli-model', '--max-model-len=4096', '--time-scale', '0', '--script', script, '--quiet'],
      {
        out: (l) => out.push(l),
        err: () => undefined,
      },
    );
    assert.ok(sim);
    try {
      assert.match(out[0], new RegExp(`listening on ${sim.url.replace(/[/.]/g, '\\$&')}`));
      const c = new VllmClient({ baseURL: sim.url });
      assert.deepEqual(await c.listModels(), [{ id: 'cli-model', maxModelLen: 4096, ownedBy: 'vllm' }]);
      assert.equal((await c.chat({ messages: [{ role: 'user', content: 'hi' }] })).message.content, 'scripted hello');
    } finally {
      await sim.close();
    }
  });

  it('--replicas N starts N servers on consecutive ports and prints each; close() stops them all', async () => {
    const out: string[] = [];
    const h = await runSimCli(['--port', '0', '--replicas', '2', '--profile', 'unit', '--time-scale', '0', '--quiet'], {
      out: (l) => out.push(l),
      err: () => undefined,
    });
    assert.ok(h);
    const [a, b] = h.replicas;
    assert.equal(b.port, a.port + 1);
    assert.ok(out[0].includes(`listening on ${a.url}`) && out[1] === `replica 1: listening on ${b.url}`, out.join('\n'));
    assert.match(out[2], /profile unit \(max-num-seqs 4, max-num-batched-tokens 1000\), time scale 0/);
    for (const r of h.replicas) assert.equal((await fetch(`${r.origin}/health`)).status, 200);
    await h.close();
    await assert.rejects(fetch(`${b.origin}/health`));
  });

  it('parses flags and rejects unknown ones', () => {
    const o = parseSimArgs(
      ['--pessimistic', '--no-tool-parser', '--no-tokenize', '--profile', 'unit', '--time-scale', '0.5'].concat([
        '--max-num-seqs=4',
        '--max-num-batched-tokens',
        '512',
        '--replicas',
        '3',
        '--tokenizer',
        'char',
        '--stream-chunk-tokens',
        '1',
      ]),
    );
    assert.equal(o.streamChunkTokens, 1);
    assert.equal(o.pessimistic, true);
    assert.equal(o.toolParser, false);
    assert.equal(o.tokenizeRoute, false);
    assert.deepEqual([o.profile, o.timeScale, o.maxNumSeqs, o.maxNumBatchedTokens, o.replicas], ['unit', 0.5, 4, 512, 3]);
    assert.equal(o.port, 8000);
    assert.throws(() => parseSimArgs(['--bogus']), /unknown option/);
    assert.throws(() => parseSimArgs(['--port', 'x']), /needs a number/);
    assert.throws(() => parseSimArgs(['--profile', 'a100']), /--profile must be one of h100-7b, unit/);
    assert.throws(() => parseSimArgs(['--max-num-seqs', '2.5']), /positive integer/);
    assert.throws(() => parseSimArgs(['--stream-chunk-tokens', '0']), /positive integer/);
    assert.throws(() => parseSimArgs(['--time-scale', '-1']), /≥ 0/);
  });

  it('compaction workers that replay the agent prefix (tools, tool_choice "none") reuse its cached blocks', async () => {
    const sim = await startSimulator({ timeScale: 0 });
    try {
      const tools: ToolSpec[] = [
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Read a file from the workspace.',
            parameters: { type: 'object', properties: { path: { type: 'string' } } },
          },
        },
      ];
      const agent: ChatMessage[] = [{ role: 'system', content: 'You are a coding agent. Follow AGENTS.md and keep diffs small.' }];
      for (let i = 0; i < 30; i++) {
        agent.push({ role: 'user', content: `Task ${i}: inspect src/module${i}.ts and report the exported symbols.` });
        agent.push({ role: 'assistant', content: `src/module${i}.ts exports run${i}() and CONFIG_${i} = ${i * 11}.` });
      }
      const c = new VllmClient({ baseURL: sim.url });
      const live = await c.chat({ messages: agent, tools });
      assert.equal(live.usage?.cachedTokens, 0);
      // worker for the block ending at message 40, and for the one ending at message 61
      const results = [];
      for (const end of [41, 61]) {
        const prefix = agent.slice(0, end);
        const prefixTokens = sim.tokenize(prefix, tools, false).length;
        const r = await c.chat({
          messages: [...prefix, { role: 'user', content: `SPLITPOINT-SUMMARIZE from message #${end - 20} to the end.` }],
          tools,
          toolChoice: 'none',
        });
        results.push(r);
        assert.equal(r.message.tool_calls, undefined);
        assert.equal(r.usage?.cachedTokens, Math.floor(prefixTokens / 16) * 16, `worker ending at ${end} reuses the whole cached prefix`);
        assert.ok(r.usage!.promptTokens - r.usage!.cachedTokens! < 60, 'uncached prefill is about the instruction only');
      }
      assert.match(results[1].message.content ?? '', /src\/module29\.ts/);
      assert.ok(!(results[1].message.content ?? '').includes('src/module5.ts'), 'outside its block');
    } finally {
      await sim.close();
    }
  });
});
