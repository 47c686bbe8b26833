/**
 * Loads the built webview (dist/webview.js + media/webview.css) in Debian's
 * headless Chromium, in a page with the host's strict CSP (nonce) and a
 * stubbed acquireVsCodeApi that records what the view posts. Never downloads
 * a browser: if /usr/bin/chromium is missing the suite fails and says so.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { HostToWebviewPost, WebviewToHost } from '../../src/protocol/messages';

export const CHROMIUM = '/usr/bin/chromium';
const root = join(__dirname, '..', '..');
const ORIGIN = 'http://splitpoint.test';
export const OUT_DIR = join(process.env.SPLITPOINT_TEST_OUTPUT ?? join(root, '.test-output'), 'webview');

/** Dark+ theme values for the variables the view uses (VS Code injects these into the real webview). */
export const THEME = `
html {
  --vscode-font-family: -apple-system, "Segoe UI", "Ubuntu", sans-serif; --vscode-font-size: 13px; --vscode-font-weight: normal;
  --vscode-editor-font-family: "Droid Sans Mono", monospace; --vscode-editor-font-size: 13px;
  --vscode-foreground: #cccccc; --vscode-descriptionForeground: #9d9d9d; --vscode-disabledForeground: #8c8c8c; --vscode-errorForeground: #f85149;
  --vscode-focusBorder: #0078d4; --vscode-sideBar-background: #181818; --vscode-editor-background: #1f1f1f;
  --vscode-input-background: #313131; --vscode-input-foreground: #cccccc; --vscode-input-border: #3c3c3c; --vscode-input-placeholderForeground: #989898;
  --vscode-button-background: #0078d4; --vscode-button-foreground: #ffffff; --vscode-button-hoverBackground: #026ec1;
  --vscode-button-secondaryBackground: #313131; --vscode-button-secondaryForeground: #cccccc;
  --vscode-badge-background: #616161; --vscode-badge-foreground: #f8f8f8;
  --vscode-charts-blue: #3794ff; --vscode-charts-green: #89d185; --vscode-charts-orange: #d18616; --vscode-charts-purple: #b180d7;
  --vscode-charts-yellow: #cca700; --vscode-charts-red: #f14c4c; --vscode-progressBar-background: #0078d4;
  --vscode-panel-border: #2b2b2b; --vscode-widget-border: #313131; --vscode-widget-shadow: rgba(0,0,0,.36);
  --vscode-textLink-foreground: #4daafc; --vscode-textLink-activeForeground: #4daafc;
  --vscode-textBlockQuote-background: #2b2b2b; --vscode-textBlockQuote-border: #616161; --vscode-textCodeBlock-background: #2b2b2b;
  --vscode-editorHoverWidget-background: #202020; --vscode-editorHoverWidget-foreground: #cccccc; --vscode-editorHoverWidget-border: #454545;
  --vscode-editorWidget-background: #202020; --vscode-list-activeSelectionBackground: #04395e; --vscode-list-activeSelectionForeground: #ffffff;
  --vscode-dropdown-background: #313131; --vscode-dropdown-foreground: #cccccc; --vscode-dropdown-border: #3c3c3c;
}`;

export interface View {
  page: Page;
  context: BrowserContext;
  /** Messages the view posted to the host, in order. */
  posted(): Promise<WebviewToHost[]>;
  clearPosted(): Promise<void>;
  /** Delivers a host message synchronously (as the host's postMessage would, minus the hop), then waits a frame. */
  send(msg: HostToWebviewPost): Promise<void>;
  frame(): Promise<void>;
  states(): Promise<unknown[]>;
  cspViolations(): Promise<string[]>;
  errors: string[];
  close(): Promise<void>;
}

export function requireChromium(bundle = 'webview'): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}. The webview tests need Debian's chromium (apt-get install chromium); they never download a browser.`,
    );
  }
  if (!existsSync(join(root, 'dist', `${bundle}.js`))) throw new Error(`dist/${bundle}.js is missing: run \`node esbuild.mjs\` first.`);
}

export function pageHtml(nonce: string, initialState: unknown, bundle = 'webview', bodyClass = 'vscode-dark', theme = THEME): string {
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${ORIGIN} 'nonce-${nonce}'`,
    `font-src ${ORIGIN}`,
    `img-src ${ORIGIN} data:`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">${theme}</style>
<link rel="stylesheet" href="${ORIGIN}/media/${bundle}.css">
<title>Splitpoint</title></head>
<body class="${bodyClass}">
<div id="root">Loading…</div>
<script nonce="${nonce}">
  window.__posted = []; window.__states = []; window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
  let state = ${JSON.stringify(initialState ?? null)};
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(JSON.parse(JSON.stringify(m))),
    getState: () => state,
    setState: (s) => { state = JSON.parse(JSON.stringify(s)); window.__states.push(state); },
  });
</script>
<script nonce="${nonce}" src="${ORIGIN}/dist/${bundle}.js"></script>
</body></html>`;
}

export async function openView(
  opts: {
    width?: number;
    height?: number;
    initialState?: unknown;
    reducedMotion?: boolean;
    bundle?: 'webview' | 'review';
    bodyClass?: string;
    theme?: string;
  } = {},
): Promise<View> {
  const bundle = opts.bundle ?? 'webview';
  requireChromium(bundle);
  const userDataDir = mkdtempSync(join(tmpdir(), 'splitpoint-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
    viewport: { width: opts.width ?? 420, height: opts.height ?? 900 },
    reducedMotion: opts.reducedMotion ? 'reduce' : 'no-preference',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  const nonce = 'bm9uY2UtdGVzdC0xMjM0NTY=';
  const js = readFileSync(join(root, 'dist', `${bundle}.js`));
  const css = readFileSync(join(root, 'media', `${bundle}.css`));
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url === `${ORIGIN}/`)
      return route.fulfill({ contentType: 'text/html', body: pageHtml(nonce, opts.initialState, bundle, opts.bodyClass, opts.theme) });
    if (url === `${ORIGIN}/dist/${bundle}.js`) return route.fulfill({ contentType: 'text/javascript', body: js });
    if (url === `${ORIGIN}/media/${bundle}.css`) return route.fulfill({ contentType: 'text/css', body: css });
    errors.push(`unexpected request: ${url}`);
    return route.abort();
  });
  await page.goto(`${ORIGIN}/`);
  await page.waitForFunction('window.__posted && window.__posted.length > 0');
  const g = 'globalThis as any';
  void g;
  const view: View = {
    page,
    context,
    errors,
    posted: () => page.evaluate('window.__posted') as Promise<WebviewToHost[]>,
    clearPosted: async () => {
      await page.evaluate('window.__posted.length = 0');
    },
    send: async (msg) => {
      await page.evaluate((m) => {
        const w = globalThis as any;
        w.dispatchEvent(new w.MessageEvent('message', { data: m }));
      }, msg);
      await view.frame();
    },
    frame: async () => {
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null))))');
    },
    states: () => page.evaluate('window.__states') as Promise<unknown[]>,
    cspViolations: () => page.evaluate('window.__csp') as Promise<string[]>,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
  return view;
}

export async function screenshot(view: View, name: string): Promise<Buffer> {
  mkdirSync(OUT_DIR, { recursive: true });
  return view.page.screenshot({ path: join(OUT_DIR, `${name}.png`), fullPage: false });
}

/** Distinct colours in a PNG (decoded in a blank page, no CSP there): a blank view has one or two. */
export async function distinctColours(view: View, png: Buffer): Promise<number> {
  const p = await view.context.newPage();
  try {
    return (await p.evaluate(async (b64) => {
      const w = globalThis as any;
      const img = new w.Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = w.document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 16) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    }, png.toString('base64'))) as number;
  } finally {
    await p.close();
  }
}

/** Opens the collapsed timeline-and-gauges row as a user would: focus its summary and press Enter. */
export async function expandOverview(view: View): Promise<void> {
  if ((await view.page.locator('details.overview').getAttribute('open')) !== null) return;
  await view.page.locator('.ov-summary').focus();
  await view.page.keyboard.press('Enter');
  await view.frame();
  if ((await view.page.locator('details.overview').getAttribute('open')) === null) throw new Error('the overview row did not open');
}
