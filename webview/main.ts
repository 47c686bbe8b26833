import type { HostToWebview, WebviewToHost } from '../src/protocol/messages';

declare function acquireVsCodeApi(): { postMessage(msg: WebviewToHost): void };

const vscode = acquireVsCodeApi();
const root = document.getElementById('root')!;

function render(msg: HostToWebview): void {
  switch (msg.type) {
    case 'snapshot': {
      const s = msg.snapshot;
      root.textContent = '';
      const h = document.createElement('h2');
      h.textContent = s.sessionTitle;
      const p = document.createElement('p');
      p.textContent = `${s.messageCount} messages` + (s.totalTokens !== null ? `, ${s.totalTokens} tokens` : '');
      root.append(h, p);
      return;
    }
  }
}

window.addEventListener('message', (e: MessageEvent<HostToWebview>) => render(e.data));
vscode.postMessage({ type: 'ready' });
