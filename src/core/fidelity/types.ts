/**
 * The vocabulary of the fidelity module: what a fact is, where it sat, and the
 * loss report the compaction panel shows before Adopt. These shapes are a
 * contract with the UI (the loss report) and with `splitpoint eval`'s JSON;
 * extend them, do not rename fields.
 */

export type FactKind = 'identifier' | 'path' | 'number' | 'error' | 'test' | 'decision' | 'constraint' | 'instruction' | 'pin';

export const FACT_KINDS: readonly FactKind[] = [
  'identifier',
  'path',
  'number',
  'error',
  'test',
  'decision',
  'constraint',
  'instruction',
  'pin',
];

/** Plural labels for "dropped 7 of 212 facts: 3 identifiers, 2 error lines". */
export const FACT_KIND_LABELS: Record<FactKind, { one: string; many: string }> = {
  identifier: { one: 'identifier', many: 'identifiers' },
  path: { one: 'path', many: 'paths' },
  number: { one: 'number', many: 'numbers' },
  error: { one: 'error line', many: 'error lines' },
  test: { one: 'test result', many: 'test results' },
  decision: { one: 'decision', many: 'decisions' },
  constraint: { one: 'constraint', many: 'constraints' },
  instruction: { one: 'instruction', many: 'instructions' },
  pin: { one: 'pin', many: 'pins' },
};

/**
 * Where a fact sat in the head: the places engines lose facts differ
 * (a consumed tool result is cleared by pre-trim, the middle of a long output
 * is truncated away).
 */
export type FactPosition = 'user' | 'assistant' | 'tool-output' | 'long-output-middle' | 'consumed-result' | 'pin' | 'summary';

export const FACT_POSITIONS: readonly FactPosition[] = [
  'user',
  'assistant',
  'tool-output',
  'long-output-middle',
  'consumed-result',
  'pin',
  'summary',
];

export interface Fact {
  /** Stable within one extraction: `${kind}:${key}`. */
  id: string;
  kind: FactKind;
  /**
   * The token that must appear, exactly, for the fact to count as kept: an
   * identifier, a path, a number with its unit, an exception name, a test
   * name, or a pin's whole text.
   */
  key: string;
  /** The line or statement the fact was taken from, for display; from a long line, the part around the key (excerptAround). */
  text: string;
  /** `text` is part of a longer line. */
  cut?: boolean;
  /** Id of the (stored, original) message the fact first appears in; for a pin without a source, the pin id. */
  messageId: string;
  /** Index of that message in the context the facts were extracted from (-1 for pins). */
  messageIndex: number;
  position: FactPosition;
  /** Test results only. */
  status?: 'passed' | 'failed';
  /** Pins must survive; a dropped pin is a defect whatever the budget. */
  mustSurvive?: boolean;
}

export interface DroppedFact {
  factId: string;
  kind: FactKind;
  key: string;
  text: string;
  /** The original message to open (clickable in the panel). */
  messageId: string;
  position: FactPosition;
  /** Which block summarised that message, when known. */
  block?: number;
  /** 'engine' when the fact never reached a worker (a plan defect), 'model' when the worker saw it but left it out. */
  cause: 'engine' | 'model';
}

export interface LossReport {
  total: number;
  kept: number;
  dropped: number;
  /** Counts of dropped facts per kind, only kinds with at least one drop, in FACT_KINDS order. */
  byKind: Array<{ kind: FactKind; dropped: number; total: number }>;
  /** Every dropped fact, in head order. */
  facts: DroppedFact[];
  /** Pins missing from the result (always also in `facts`). */
  missingPins: string[];
  /** One line: "dropped 7 of 212 facts: 3 identifiers, 2 error lines, 2 numbers". */
  headline: string;
}
