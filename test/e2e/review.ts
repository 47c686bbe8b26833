/**
 * Helpers for the review editor and the side bar's layout in the e2e suite:
 * finding the editor's frame, resizing the side bar by its sash, and
 * running axe-core (from node_modules) inside a webview frame.
 */
import { readFileSync } from 'node:fs';
import type { Frame, Page } from 'playwright-core';
import { findFrame, waitForWorkbench } from '../vscode/harness.mjs';
import { until } from './ui';

export const REVIEW = {
  heading: 'Review compaction',
  sidebarButton: 'Review',
  paletteCommand: 'Splitpoint: Review Compaction',
  original: (n: number) => `Block ${n} original messages`,
  summary: (n: number) => `Block ${n} summary`,
  editor: (n: number) => new RegExp(`^Edit the summary of block ${n}\\.`),
  focus: (n: number) => `Focus for regenerating block ${n}`,
} as const;

/** The review editor's frame (a webview panel in the editor area). */
export function reviewFrame(page: Page, timeoutMs = 30_000): Promise<Frame> {
  return findFrame(page, (f) => f.getByRole('heading', { name: REVIEW.heading, exact: true }), { timeoutMs });
}

/**
 * Closes the review editor by its tab's close button. Not by the palette: with
 * the editor focused, keys typed before the palette shows reach its shortcuts.
 */
export async function closeReviewEditor(page: Page): Promise<void> {
  await page
    .getByRole('tab', { name: /^Review Compaction/ })
    .getByRole('button', { name: /^Close/ })
    .click();
  await until(
    'the review editor to close',
    async () =>
      !(await reviewFrame(page, 1500).then(
        () => true,
        () => false,
      )),
  );
}

/** Sets the side bar's width by dragging the sash on its right edge. */
export async function setSideBarWidth(page: Page, width: number): Promise<number> {
  const bar = page.locator('.part.sidebar').first();
  const box = (await bar.boundingBox())!;
  const y = box.y + box.height / 2;
  const edge = box.x + box.width;
  await page.mouse.move(edge - 1, y);
  await page.mouse.down();
  await page.mouse.move(box.x + width, y, { steps: 8 });
  await page.mouse.up();
  return (await bar.boundingBox())!.width;
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** Serious and critical axe violations in a frame (evaluated through the DevTools protocol, which the webview's CSP does not govern). */
export async function axeSerious(frame: Frame): Promise<{ id: string; help: string; nodes: string[] }[]> {
  await frame.evaluate(AXE);
  const v = (await frame.evaluate(async () => {
    const w = globalThis as any;
    const r = await w.axe.run(w.document, { resultTypes: ['violations'] });
    return r.violations.map((x: any) => ({
      id: x.id,
      impact: x.impact,
      help: x.help,
      nodes: x.nodes.slice(0, 4).map((n: any) => n.target.join(' ')),
    }));
  })) as { id: string; impact: string; help: string; nodes: string[] }[];
  return v.filter((x) => x.impact === 'serious' || x.impact === 'critical').map(({ id, help, nodes }) => ({ id, help, nodes }));
}

/** Elements of the frame that scroll sideways or stick out of the page. */
export async function sideways(frame: Frame, selector: string): Promise<string[]> {
  return (await frame.evaluate((sel) => {
    const d = (globalThis as any).document;
    const out: string[] = [];
    if (d.scrollingElement.scrollWidth > d.scrollingElement.clientWidth) out.push('page');
    for (const el of d.querySelectorAll(sel)) {
      const s = (globalThis as any).getComputedStyle(el);
      // Hidden parts and deliberate scrollers (the zoomed timeline) are not cut-off text.
      if (el.closest('[hidden]') || s.display === 'none' || s.overflowX === 'auto' || s.overflowX === 'scroll') continue;
      if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1)
        out.push(el.getAttribute('aria-label') ?? `${el.tagName.toLowerCase()}.${el.className}`);
    }
    return out;
  }, selector)) as string[];
}

/** Opens the review editor as a user does from the command palette, and returns its frame. */
export async function openReviewFromPalette(page: Page): Promise<Frame> {
  await page.keyboard.press('F1');
  await page.locator('.quick-input-widget input').first().waitFor({ state: 'visible' });
  await page.keyboard.type(REVIEW.paletteCommand);
  await page.keyboard.press('Enter');
  return reviewFrame(page);
}

/**
 * Reloads the window as a user does (Developer: Reload Window). Unlike a bare
 * page reload it runs the workbench's shutdown, which writes the editor layout
 * (and so the open review editor) to the browser's storage first; a bare
 * reload can race that asynchronous write and lose the editor.
 */
export async function reloadWindowCommand(page: Page): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible' });
  await input.fill('>Developer: Reload Window');
  const loaded = page.waitForEvent('load', { timeout: 60_000 });
  await page.keyboard.press('Enter');
  await loaded;
  await waitForWorkbench(page);
}
