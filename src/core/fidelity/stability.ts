/**
 * Stability, as in the parallel-compaction paper: how evenly blocks compress
 * (the coefficient of variation of the per-block ratio) and how alike two
 * runs' summaries of the same head are (cosine of their embeddings, or of
 * TF-IDF vectors when the server has no embeddings endpoint).
 */

export function coefficientOfVariation(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  if (mean === 0) return 0;
  const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length;
  return Math.sqrt(variance) / mean;
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

const words = (t: string) => t.toLowerCase().match(/[\p{L}\p{N}_./-]+/gu) ?? [];

/** TF-IDF vectors of documents over their joint vocabulary (smoothed idf, so two identical documents still weigh their words). */
export function tfidf(docs: readonly string[]): number[][] {
  const tfs = docs.map((d) => {
    const m = new Map<string, number>();
    for (const w of words(d)) m.set(w, (m.get(w) ?? 0) + 1);
    return m;
  });
  const df = new Map<string, number>();
  for (const tf of tfs) for (const w of tf.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  const vocab = [...df.keys()].sort();
  const idf = vocab.map((w) => Math.log((1 + docs.length) / (1 + df.get(w)!)) + 1);
  return tfs.map((tf) => vocab.map((w, i) => (tf.get(w) ?? 0) * idf[i]!));
}

export type Embedder = (texts: string[]) => Promise<number[][] | undefined>;

export interface Similarity {
  cosine: number;
  method: 'embeddings' | 'tf-idf';
}

/** Cosine between two texts, by the server's embeddings when it has them. */
export async function similarity(a: string, b: string, embed?: Embedder): Promise<Similarity> {
  const e = embed ? await embed([a, b]).catch(() => undefined) : undefined;
  if (e && e.length === 2) return { cosine: cosine(e[0]!, e[1]!), method: 'embeddings' };
  const [x, y] = tfidf([a, b]);
  return { cosine: cosine(x!, y!), method: 'tf-idf' };
}
