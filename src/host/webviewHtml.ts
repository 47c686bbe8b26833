import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/** A fresh nonce per render; only scripts carrying it may run. */
export function makeNonce(): string {
  return randomBytes(18).toString('base64');
}

/**
 * The webview page. The CSP allows nothing remote: scripts only with the
 * nonce, styles and fonts only from the extension's own dist/ and media/.
 */
export function renderWebviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const nonce = makeNonce();
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview.js'));
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${webview.cspSource} 'nonce-${nonce}'`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Splitpoint</title>
</head>
<body>
<div id="root">Loading…</div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
