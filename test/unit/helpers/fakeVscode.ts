import Module from 'node:module';

/**
 * Just enough of the `vscode` module to load and activate the bundled
 * extension in plain Node. It records what activation registered; the real
 * extension host is exercised by the test/vscode suite.
 */
export interface FakeVscode {
  registeredCommands: string[];
  registeredViews: string[];
  /** Webview panel types whose state is restored after a reload. */
  registeredSerializers: string[];
  outputChannels: string[];
  api: Record<string, unknown>;
}

export function installFakeVscode(): { fake: FakeVscode; uninstall(): void } {
  const fake: FakeVscode = { registeredCommands: [], registeredViews: [], registeredSerializers: [], outputChannels: [], api: {} };
  const disposable = { dispose() {} };
  const uri = (p: string) => ({ fsPath: p, path: p, toString: () => `file://${p}` });
  fake.api = {
    ExtensionMode: { Production: 1, Development: 2, Test: 3 },
    Disposable: class {
      constructor(private readonly f: () => void) {}
      dispose(): void {
        this.f();
      }
    },
    Uri: { joinPath: (base: { path: string }, ...parts: string[]) => uri([base.path, ...parts].join('/')), file: uri },
    window: {
      createOutputChannel: (name: string) => {
        fake.outputChannels.push(name);
        return { info() {}, warn() {}, error() {}, debug() {}, trace() {}, show() {}, dispose() {} };
      },
      registerWebviewViewProvider: (id: string) => {
        fake.registeredViews.push(id);
        return disposable;
      },
      registerWebviewPanelSerializer: (viewType: string) => {
        fake.registeredSerializers.push(viewType);
        return disposable;
      },
      createStatusBarItem: () => ({ show() {}, hide() {}, dispose() {} }),
    },
    commands: {
      registerCommand: (id: string) => {
        fake.registeredCommands.push(id);
        return disposable;
      },
      executeCommand: async () => undefined,
    },
    workspace: { getConfiguration: () => ({ get: () => undefined }), isTrusted: true },
  };
  type Loader = (request: string, parent: unknown, isMain: boolean) => unknown;
  const mod = Module as unknown as { _load: Loader };
  const original = mod._load;
  mod._load = function (request, parent, isMain) {
    if (request === 'vscode') return fake.api;
    return original.call(this, request, parent, isMain);
  };
  return { fake, uninstall: () => void (mod._load = original) };
}
