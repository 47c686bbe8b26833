// `npm start`: installs and builds if needed, then shows what Splitpoint's
// engine makes of the bundled example session: per-message tokens, turns and
// the split point under each strategy. (The VS Code launcher replaces this
// once the extension host and webview land.)
import { spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, ensureDependencies } from './ensure-deps.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
ensureDependencies(root);
build(root);
const session = process.env.SPLITPOINT_SESSION ?? join(root, 'test', 'fixtures', 'example-session.json');
console.log(`\n$ splitpoint inspect --session ${session}\n`);
const r = spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), 'inspect', '--session', session], { stdio: 'inherit' });
process.exit(r.status ?? 1);
