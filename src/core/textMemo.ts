/**
 * Results computed from texts (lines, messages), kept across calls in maps
 * that share one bound on the characters their keys hold: past it, every map
 * starts over. The keys are mostly strings the session holds anyway, so the
 * bound is on what a long session can make the maps keep alive.
 */
export class TextMemo {
  private readonly maps: Map<string, unknown>[] = [];
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  /** A new map under this memo's bound. */
  map<T>(): Map<string, T> {
    const m = new Map<string, T>();
    this.maps.push(m as Map<string, unknown>);
    return m;
  }

  /** `m`'s value for `key`, computed by `f` the first time. */
  get<T>(m: Map<string, T>, key: string, f: (key: string) => T): T {
    let v = m.get(key);
    if (v === undefined) {
      v = f(key);
      this.reserve(key.length);
      m.set(key, v);
    }
    return v;
  }

  /** Makes room for `chars` more characters (every map starts over when they would not fit). */
  reserve(chars: number): void {
    if (this.chars + chars > this.maxChars) {
      for (const m of this.maps) m.clear();
      this.chars = 0;
    }
    this.chars += chars;
  }
}
