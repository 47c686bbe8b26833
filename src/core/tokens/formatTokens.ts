/**
 * A token count as every view says it: "8,000", "31.4K", "310K". One rule, so that the side bar, the review editor and
 * the CLI name the same count the same way.
 */
export function formatTokens(n: number): string {
  const r = Math.round(n);
  if (Math.abs(r) >= 100_000) return `${(r / 1000).toFixed(0)}K`;
  if (Math.abs(r) >= 10_000) return `${(r / 1000).toFixed(1)}K`;
  return r.toLocaleString('en-US');
}
