import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recallTool } from '../../src/core/agent/recall';
import { capToolOutput } from '../../src/core/agent/toolOutput';
import { fileSpill } from '../../src/node/tools';
import { result } from './helpers/build';

const ctx = () => ({ signal: new AbortController().signal, callId: 'call_recall' });

/** A 2,000-line output whose line 1000 holds a setting; the trace lines outrank it, so the cut leaves it out. */
function traceWithSetting(): string {
  return Array.from({ length: 2_000 }, (_, i) =>
    i === 999 ? 'MAGIC_PORT_SETTING=8123 (from config/local.env)' : `    at handler${i} (src/routes/r${i}.ts:${i}:7)`,
  ).join('\n');
}

describe('recall reaches the full text of a truncated tool output', () => {
  it('finds a term that is only in the spilled output, with nothing compacted', async () => {
    const spill = fileSpill(join(mkdtempSync(join(tmpdir(), 'sp-recall-')), 'session.jsonl.spill'));
    const text = traceWithSetting();
    const capped = await capToolOutput(text, 'call_log', spill);
    assert.ok(!capped.includes('MAGIC_PORT_SETTING'), 'the setting was cut from what the session keeps');
    const recall = recallTool(() => [], spill);
    const r = await recall.execute({ query: 'MAGIC_PORT_SETTING' }, ctx());
    assert.match(r.content, /MAGIC_PORT_SETTING=8123 \(from config\/local\.env\)/, r.content);
    assert.match(r.content, /^\[call_log\.txt full tool output\]/);
  });

  it('the truncation note names recall as the way to the cut part, not the spill file', async () => {
    const spill = fileSpill(join(mkdtempSync(join(tmpdir(), 'sp-recall-')), 'session.jsonl.spill'));
    const capped = await capToolOutput(traceWithSetting(), 'call_log', spill);
    const note = capped.slice(capped.lastIndexOf('\n[Output truncated: '));
    assert.match(note, /call recall with words from it/);
    assert.doesNotMatch(note, /Ask for a narrower range if you need the middle/);
    // Without a place to save it, nothing can bring the cut part back: the note does not promise recall.
    const unsaved = await capToolOutput(traceWithSetting(), 'call_log', undefined);
    assert.doesNotMatch(unsaved.slice(unsaved.lastIndexOf('\n[Output truncated: ')), /recall/);
  });

  it('searches archived messages and spilled outputs together, and says what it searched when nothing matches', async () => {
    const spill = fileSpill(join(mkdtempSync(join(tmpdir(), 'sp-recall-')), 'session.jsonl.spill'));
    await capToolOutput(traceWithSetting(), 'call_log', spill);
    const archived = [{ ...result('call_old', 'The pool size is POOL_MAX=40 in src/db/pool.ts'), id: 'm7' }];
    const recall = recallTool(() => archived, spill);
    const both = await recall.execute({ query: 'POOL_MAX MAGIC_PORT_SETTING' }, ctx());
    assert.match(both.content, /\[m7 tool\]\nThe pool size is POOL_MAX=40/);
    assert.match(both.content, /\[call_log\.txt full tool output\]\n.*MAGIC_PORT_SETTING=8123/s);
    const none = await recall.execute({ query: 'kubernetes' }, ctx());
    assert.equal(
      none.content,
      'No archived message or tool output matches "kubernetes" (1 archived messages and 1 full tool outputs searched).',
    );
  });

  it('with no spill folder yet and nothing archived, says the conversation is all in context', async () => {
    const spill = fileSpill(join(mkdtempSync(join(tmpdir(), 'sp-recall-')), 'never-created.spill'));
    const r = await recallTool(() => [], spill).execute({ query: 'anything' }, ctx());
    assert.match(
      r.content,
      /^Nothing has been compacted yet and no tool output was truncated: the whole conversation is still in context\.$/,
    );
  });
});
