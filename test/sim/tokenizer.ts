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

/** Runs of non-space characters longer than this are encoded in slices of SLICE. */
const LONG_RUN = 256;
const SLICE = 64;
const LONG_RUN_RE = new RegExp(`\\S{${LONG_RUN + 1},}`, 'g');
const HAS_LONG_RUN = new RegExp(`\\S{${LONG_RUN + 1}}`);

/**
 * js-tiktoken's merge is quadratic in the length of one pre-tokenised piece
 * (a 10,000-dot line takes about 24 s), and a stalled simulator stalls every
 * request. Long runs without spaces are cut into slices first: such text
 * tokenises a little differently from a real server's, but always the same
 * way, so prefix caching is unaffected.
 */
function boundedEncode(text: string, slice: (part: string) => number[]): number[] {
  const enc = loadTiktoken();
  if (!HAS_LONG_RUN.test(text)) return enc.encode(text, [], []);
  const out: number[] = [];
  let at = 0;
  for (const m of text.matchAll(LONG_RUN_RE)) {
    if (m.index > at) out.push(...enc.encode(text.slice(at, m.index), [], []));
    for (let i = 0; i < m[0].length; i += SLICE) out.push(...slice(m[0].slice(i, i + SLICE)));
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(...enc.encode(text.slice(at), [], []));
  return out;
}

export function tiktokenTokenizer(): SimTokenizer {
  const memo = new Memo(50_000);
  // Slices of a long run repeat (a line of dashes): each is merged once.
  const slices = new Memo(10_000);
  const slice = (part: string) => slices.get(part, () => loadTiktoken().encode(part, [], []));
  return {
    name: 'tiktoken',
    encode: (text) => (text === '' ? [] : memo.get(text, () => boundedEncode(text, slice))),
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
