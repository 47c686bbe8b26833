/**
 * Tokenizers for the simulator. 'tiktoken' (cl100k_base, loaded lazily) is
 * the realistic default; 'char' (one token per code point) makes hit counts
 * easy to compute by hand in tests. Special chat-template markers are single
 * tokens in both.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';

export interface SimTokenizer {
  readonly name: string;
  /** Plain text → token ids (no special tokens are recognised inside). */
  encode(text: string): number[];
  /** The id of a template special marker such as <|im_start|>. */
  special(marker: string): number;
}

const SPECIALS: Record<string, number> = { '<|im_start|>': 100264, '<|im_end|>': 100265, '<|endoftext|>': 100257 };

let encoder: Tiktoken | undefined;
/** Building the BPE tables takes a few hundred ms: only when first needed. */
function loadTiktoken(): Tiktoken {
  encoder ??= new Tiktoken(cl100k);
  return encoder;
}

class Memo {
  private readonly map = new Map<string, number[]>();
  constructor(private readonly limit: number) {}
  get(text: string, make: () => number[]): number[] {
    let v = this.map.get(text);
    if (!v) {
      v = make();
      if (this.map.size >= this.limit) this.map.clear();
      this.map.set(text, v);
    }
    return v;
  }
}

export function tiktokenTokenizer(): SimTokenizer {
  const memo = new Memo(50_000);
  return {
    name: 'tiktoken',
    encode: (text) => (text === '' ? [] : memo.get(text, () => loadTiktoken().encode(text, [], []))),
    special: (m) => SPECIALS[m] ?? 100_300,
  };
}

export function charTokenizer(): SimTokenizer {
  return {
    name: 'char',
    encode: (text) => Array.from(text, (c) => c.codePointAt(0)!),
    special: (m) => -1 - Object.keys(SPECIALS).indexOf(m),
  };
}

export function makeTokenizer(kind: 'tiktoken' | 'char' | SimTokenizer | undefined): SimTokenizer {
  if (kind === undefined || kind === 'tiktoken') return tiktokenTokenizer();
  if (kind === 'char') return charTokenizer();
  return kind;
}
