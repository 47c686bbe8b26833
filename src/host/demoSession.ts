import { readFile } from 'node:fs/promises';
import type { HostLog } from './log';
import type { SessionLibrary } from './sessionLibrary';

/**
 * `npm start` sets SPLITPOINT_DEMO_SESSION to the example session, so a new
 * user opens onto a conversation to compact. Only into an empty library:
 * it never touches existing sessions. A failure is logged, not shown.
 */
export async function importDemoSession(library: SessionLibrary, log: HostLog): Promise<boolean> {
  const file = process.env.SPLITPOINT_DEMO_SESSION;
  if (!file) return false;
  try {
    const { store } = await library.importText(await readFile(file, 'utf8'), file);
    await store.close();
    log.info(`imported the demo session ${file}: ${store.snapshot.messages.length} messages`);
    return true;
  } catch (err) {
    log.warn(`could not import the demo session ${file}: ${(err as Error).message}`);
    return false;
  }
}
