import assert from 'node:assert/strict';
import { PrefixCache } from '../sim/prefixCache';

/** n distinct tokens starting at `start`. */
const seq = (start: number, n: number) => Array.from({ length: n }, (_, i) => start + i);

describe('sim PrefixCache (vLLM v1 block semantics)', () => {
  it('two prompts sharing exactly 40 tokens hit 2 full blocks (32 tokens)', () => {
    const c = new PrefixCache({ blockSize: 16, capacityBlocks: 64 });
    const shared = seq(1, 40);
    const a = c.admit('a', [...shared, ...seq(1000, 30)]);
    assert.equal(a.cachedTokens, 0);
    c.release('a');
    const b = c.admit('b', [...shared, ...seq(5000, 30)]);
    assert.equal(b.hitBlocks, 2);
    assert.equal(b.cachedTokens, 32);
    assert.deepEqual({ queries: c.stats().queries, hits: c.stats().hits }, { queries: 70 + 70, hits: 32 });
  });

  it('hashes are chained: an identical block after a different prefix does not hit', () => {
    const c = new PrefixCache({ blockSize: 16, capacityBlocks: 64 });
    c.admit('a', [...seq(1, 16), ...seq(100, 16), 7]);
    const b = c.admit('b', [...seq(500, 16), ...seq(100, 16), 7]);
    assert.equal(b.hitBlocks, 0);
  });

  it('only full blocks are cached, and the last prompt token is always recomputed', () => {
    const c = new PrefixCache({ blockSize: 16, capacityBlocks: 64 });
    const p = seq(1, 48); // exactly 3 blocks
    c.admit('a', p);
    // same 48 tokens again: at most floor(47/16) = 2 blocks may hit
    assert.equal(c.admit('b', p).hitBlocks, 2);
    // 47 tokens: the third block was never full in this prompt → 2 blocks
    assert.equal(c.admit('c', p.slice(0, 47)).hitBlocks, 2);
    // 49 tokens: all 3 full blocks hit
    assert.equal(c.admit('d', [...p, 99]).hitBlocks, 3);
    // a 15-token prompt has no full block
    assert.equal(c.admit('e', seq(1, 15)).hitBlocks, 0);
  });

  it('registers blocks at admission: a request admitted right after reuses blocks still being computed', () => {
    const c = new PrefixCache({ blockSize: 16, capacityBlocks: 64 });
    const p = [...seq(1, 64), ...seq(900, 5)];
    c.admit('first', p); // not released, prefill not done
    const second = c.admit('second', [...seq(1, 64), ...seq(700, 5)]);
    assert.equal(second.hitBlocks, 4);
    assert.deepEqual(second.blocks.slice(0, 4), c.admit('third', [...seq(1, 64), 1]).blocks.slice(0, 4));
  });

  it('pessimistic mode: reusable only after prefillDone()', () => {
    const c = new PrefixCache({ blockSize: 16, capacityBlocks: 64, pessimistic: true });
    const p = [...seq(1, 64), 5];
    c.admit('first', p);
    assert.equal(c.admit('second', p).hitBlocks, 0, 'first is still prefilling');
    c.prefillDone('first');
    assert.equal(c.admit('third', p).hitBlocks, 4);
    // second also finished its prefill: its identical blocks do not replace first's
    c.prefillDone('second');
    assert.equal(c.stats().cachedBlocks, 4);
  });

  it('LRU eviction under capacity: the least recently used free blocks go first, tail blocks before head blocks', () => {
    const c = new PrefixCache({ blockSize: 16, capacityBlocks: 8 });
    const A = [...seq(1, 64), 0]; // 4 full blocks + partial = 5 blocks
    const B = [...seq(1000, 32), 0]; // 2 full + partial = 3 blocks
    c.admit('A', A);
    c.release('A');
    c.admit('B', B);
    c.release('B');
    assert.equal(c.stats().cachedBlocks, 6);
    // touch A again so B becomes least recently used
    assert.equal(c.admit('A2', A).hitBlocks, 4);
    c.release('A2');
    // C needs 3 new blocks: 2 empty (the two partial blocks) + 1 evicted; B's tail block goes first
    const C = [...seq(5000, 32), 0];
    c.admit('C', C);
    c.release('C');
    assert.equal(c.stats().evictions, 1);
    assert.equal(c.peekHitBlocks([...seq(1000, 32), 1]), 1, 'B keeps its head block, loses its tail block');
    assert.equal(c.peekHitBlocks([...A, 1]), 4, 'A was used recently and survives');
  });

  it('blocks of running requests are never evicted; canAdmit reports a full pool', () => {
    const c = new PrefixCache({ blockSize: 16, capacityBlocks: 4 });
    c.admit('A', seq(1, 48)); // 3 blocks pinned
    assert.equal(c.canAdmit(seq(100, 32)), false, 'needs 2, only 1 free');
    assert.equal(c.canAdmit(seq(100, 16)), true);
    c.release('A');
    assert.equal(c.canAdmit(seq(100, 32)), true);
    const b = c.admit('B', seq(100, 64));
    assert.equal(b.blocks.length, 4);
    assert.equal(c.peekHitBlocks([...seq(1, 48), 1]), 0, 'A was evicted to make room');
  });

  it('disabled cache never hits but still counts queries', () => {
    const c = new PrefixCache({ enabled: false, capacityBlocks: 16 });
    c.admit('a', seq(1, 40));
    assert.equal(c.admit('b', seq(1, 40)).hitBlocks, 0);
    assert.equal(c.stats().queries, 80);
    assert.equal(c.stats().hits, 0);
  });
});
