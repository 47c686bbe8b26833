/** Runs axe-core (from node_modules) in a page and returns the serious and critical violations. */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

export async function seriousViolations(page: Page, include?: string): Promise<AxeViolation[]> {
  // page.evaluate goes through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE);
  const res = (await page.evaluate(async (sel) => {
    const w = globalThis as any;
    const r = await w.axe.run(sel ? w.document.querySelector(sel) : w.document, { resultTypes: ['violations'] });
    return r.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n: any) => n.target.join(' ')),
    }));
  }, include ?? null)) as AxeViolation[];
  return res.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
