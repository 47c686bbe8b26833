/** The middle value (the upper one of an even count); NaN for none. Benchmarks report medians of rounds. */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
}

/** The arithmetic mean; NaN for none. */
export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, x) => a + x, 0) / xs.length;
}
