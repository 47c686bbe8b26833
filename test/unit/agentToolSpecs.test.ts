/**
 * The agent's tools as it sends them are AGENT_TOOL_SPECS, byte for byte: a cache-aligned compaction worker started
 * by the CLI (compact, eval, bench) replays those, and the server's prefix cache serves it only if they are the
 * agent's own. recall's description changed with the spill search and had to change in both places.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinTool } from '../../src/core/agent/pinTool';
import { recallTool } from '../../src/core/agent/recall';
import { ToolRegistry } from '../../src/core/agent/tools';
import { AGENT_TOOL_SPECS } from '../../src/core/agent/toolSpecs';
import { SessionStore } from '../../src/core/session/sessionStore';
import { fileSpill, nodeWorkspaceTools } from '../../src/node/tools';
import { MemoryStorage, counterIds, fixedClock } from './helpers/memoryStorage';

describe("the agent's tool definitions", () => {
  it('are the shared AGENT_TOOL_SPECS, in order and to the byte, as the CLI run builds them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-specs-'));
    try {
      const store = await SessionStore.create({ storage: new MemoryStorage(), ids: counterIds(), clock: fixedClock() }, '/s.jsonl');
      const tools = new ToolRegistry([
        ...nodeWorkspaceTools(dir),
        recallTool(() => store.archived(), fileSpill(join(dir, 's.spill'))),
        pinTool(store, counterIds(), fixedClock()),
      ]);
      assert.equal(JSON.stringify(tools.specs()), JSON.stringify(AGENT_TOOL_SPECS));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
