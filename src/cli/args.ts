import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

/** A usage error: printed with the command's help, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function requireString(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`${flag} is required`);
  return value;
}

export function intOption(value: string | boolean | undefined, flag: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isInteger(n) || n < min)
    throw new UsageError(`${flag} must be an integer ≥ ${min}, got ${String(value)}`);
  return n;
}

/** A flag that must be one of a fixed set of words. */
export function oneOf<T extends string>(value: string | boolean | undefined, allowed: readonly T[], flag: string, fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${flag} must be one of ${allowed.join(', ')}; got ${String(value)}`);
}
