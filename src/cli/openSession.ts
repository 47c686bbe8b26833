import { MemoryStorage } from '../core/session/memoryStorage';
import { isSessionLog, SessionStore } from '../core/session/sessionStore';
import { NodeFileStorage } from '../node/fileStorage';

/**
 * Opens a session log for writing (repairing a torn last line; holding the
 * writer lock until the store is closed or the process exits), or with
 * `readOnly` for reading only (nothing is ever written, not even a backup), or
 * imports a plain OpenAI messages array into memory (nothing is written next to it).
 */
export async function openSession(
  path: string,
  options: { readOnly?: boolean; holder?: string } = {},
): Promise<{ store: SessionStore; isLog: boolean }> {
  const storage = new NodeFileStorage(options.holder);
  const text = await storage.read(path);
  if (text === undefined) throw new Error(`No such file: ${path}`);
  if (isSessionLog(text))
    return { store: await SessionStore.open({ storage }, path, { readOnly: options.readOnly === true }), isLog: true };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is neither a Splitpoint session log nor valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const store = await SessionStore.importArray({ storage: new MemoryStorage() }, '/memory/session.jsonl', raw);
  return { store, isLog: false };
}
