// Types for scripts/bundles.mjs (imported by test/unit/bundleCharset.test.ts).
import type { BuildOptions } from 'esbuild';
export function bundleTargets(o: { production: boolean }): BuildOptions[];
