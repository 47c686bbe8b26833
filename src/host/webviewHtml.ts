import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/** A fresh nonce per render; only scripts carrying it may run. */
export function makeNonce(): string {
  return randomBytes(18).toString('base64');
}

/**
 * The Content-Security-Policy of the page. Nothing remote: scripts only with
 * the nonce; styles, fonts and images only from the extension's own files
 * (`cspSource` covers the dist/ and media/ roots the view allows); no
 * connect-src, so the page cannot talk to the network at all. Pure, for tests.
 */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
    `img-src ${cspSource} data:`,
  ].join('; ');
}

/** One page shell for every Splitpoint webview: the CSP with a fresh nonce, one stylesheet, one script bundle. */
export function webviewPage(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  page: { script: string; style: string; title: string },
): string {
  const nonce = makeNonce();
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', page.script));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', page.style));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(webview.cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>${page.title}</title>
</head>
<body>
<div id="root">Loading…</div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}

export function renderWebviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  return webviewPage(webview, extensionUri, { script: 'webview.js', style: 'webview.css', title: 'Splitpoint' });
}
