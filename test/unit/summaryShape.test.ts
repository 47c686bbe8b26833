import assert from 'node:assert/strict';
import { summarySections } from '../../src/core/compaction/prompts';
import { unusableSummary } from '../../src/core/compaction/workerRun';

const check = (text: string) => unusableSummary(text, 'stop', 500, summarySections(false));

describe("a worker's reply: a summary, or not", () => {
  it('takes a summary whose sections the model named in the conversation’s language, or as its own headings', () => {
    const replies = {
      french: '## DÉCISIONS\n- garder le parseur Pratt\n## FAITS\n- src/parser.ts\n## ERREURS\n- aucune',
      chinese: '决策：\n- 保留 Pratt 解析器\n事实：\n- src/parser.ts',
      bullets: '• kept the Pratt parser in src/parser.ts\n• 1.2.3 still becomes NaN',
      numbered: '1. kept the Pratt parser\n2. the lexer accepts [0-9.]',
      english: 'DECISIONS:\n- none\nFACTS:\n- src/parser.ts',
      markdown: '## Decisions\n- none',
    };
    for (const [name, text] of Object.entries(replies)) assert.equal(check(text), undefined, name);
  });

  it('refuses a refusal, one line of chatter, and an empty or cut-off reply', () => {
    assert.match(check("I'm sorry, but I can't help with that.")!.message, /the reply is not a summary/);
    assert.match(check('Sure, here is the summary you asked for:')!.message, /the reply is not a summary/);
    assert.match(check('')!.message, /empty summary/);
    assert.match(
      unusableSummary('DECISIONS:\n- we decided to', 'length', 120, summarySections(false))!.message,
      /cut off at max_tokens \(120\)/,
    );
  });
});
