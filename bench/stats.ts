/** The middle value (the upper one of an even count); NaN for none. Benchmarks report medians of rounds. */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
}
