// Run in a child process (node --import tsx): opens the session log named by argv[2] for writing, as the editor
// does, says "held" on stdout, and keeps the session open until it is killed or its stdin closes.
import { SessionStore } from '../../../src/core/session/sessionStore';
import { NodeFileStorage } from '../../../src/node/fileStorage';

void SessionStore.open({ storage: new NodeFileStorage('VS Code') }, process.argv[2]!).then((store) => {
  process.stdout.write('held\n');
  process.stdin.resume();
  process.stdin.on('end', () => void store.close().then(() => process.exit(0)));
});
