/**
 * What the host writes to its log. VS Code's LogOutputChannel satisfies this
 * structurally; tests pass an array-backed fake. Rule for every caller: ids,
 * counts, timings and error kinds only. Never the API key, never prompt or
 * file contents beyond preview() of a few dozen characters.
 */
export interface HostLog {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** A one-line, length-capped preview of user or model text for the log. */
export function preview(text: string, max = 40): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= max ? JSON.stringify(one) : `${JSON.stringify(one.slice(0, max))}… (${one.length} chars)`;
}

export class MemoryLog implements HostLog {
  readonly lines: string[] = [];
  trace(m: string): void {
    this.lines.push(`trace ${m}`);
  }
  debug(m: string): void {
    this.lines.push(`debug ${m}`);
  }
  info(m: string): void {
    this.lines.push(`info ${m}`);
  }
  warn(m: string): void {
    this.lines.push(`warn ${m}`);
  }
  error(m: string): void {
    this.lines.push(`error ${m}`);
  }
}
