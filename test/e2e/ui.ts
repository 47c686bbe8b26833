/**
 * How the e2e suite finds things: ARIA roles and accessible names only (the
 * contract of the webview, issue 7), never CSS classes. One place to adjust.
 */
import type { Frame, Locator, Page } from 'playwright-core';
import { findFrame } from '../vscode/harness.mjs';

export const NAMES = {
  activityTab: 'Splitpoint',
  input: 'Message to the agent',
  send: 'Send',
  conversation: 'Conversation',
  approvalGroup: /^Approve run_command/,
  approve: 'Approve',
  blocks: 'Summary blocks',
  /** A block chip: its name starts with its visible text, "#1 done 5,315→60". */
  block: (n: number) => new RegExp(`^#${n} `),
  edit: 'Edit',
  editSummary: (n: number) => `Edit summary of block ${n}`,
  save: 'Save',
  adopt: 'Adopt',
  undo: 'Undo compaction',
  slider: 'Split point',
  timeline: /^Timeline of messages/,
  contextMeter: 'Context used',
  projectedMeter: 'Projected after compaction',
  ratioMeter: 'Compression ratio',
} as const;

/** The chat input (a textarea with role combobox, for the slash-command list). */
export function messageInput(f: Frame): Locator {
  return f
    .getByRole('combobox', { name: NAMES.input })
    .or(f.getByRole('textbox', { name: NAMES.input }))
    .first();
}

/** The Splitpoint webview's frame (webviews are nested iframes of the workbench). */
export async function viewFrame(page: Page, timeoutMs = 30_000): Promise<Frame> {
  return findFrame(page, (f) => messageInput(f), { timeoutMs });
}

/**
 * Opens the Splitpoint view: its activity-bar tab, then the command palette
 * ("Splitpoint: Open") if the view has not shown up. After a reload the tab
 * can be restored as selected while the side bar is still closed, so a
 * selected tab alone proves nothing: only the view's own input does.
 */
export async function openView(page: Page): Promise<Frame> {
  const tab = page.getByRole('tab', { name: NAMES.activityTab, exact: false }).first();
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await tab.waitFor({ timeout: 15_000 });
      if ((await tab.getAttribute('aria-selected')) !== 'true') await tab.click();
    } catch {
      // no tab yet: the palette below still works
    }
    try {
      return await viewFrame(page, 8_000);
    } catch {
      await page.keyboard.press('F1');
      await page.keyboard.type('Splitpoint: Open');
      await page.keyboard.press('Enter');
      try {
        return await viewFrame(page, 8_000);
      } catch {
        // try again from the top
      }
    }
  }
  return viewFrame(page);
}

export async function numberAttr(l: Locator, name = 'aria-valuenow'): Promise<number> {
  const v = await l.getAttribute(name);
  if (v === null) throw new Error(`no ${name}`);
  return Number(v);
}

/** Polls until fn() is truthy. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
