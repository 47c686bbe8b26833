import type { StoredMessage } from '../core/messages';
import { SessionStore } from '../core/session/sessionStore';
import { importMessages } from '../core/session/importMessages';
import { randomIds, systemClock } from '../core/session/storage';
import { NodeFileStorage } from './fileStorage';

export interface LoadedSession {
  /** 'log' for a Splitpoint session log, 'messages' for a plain OpenAI messages array. */
  format: 'log' | 'messages';
  /** The active context (for a plain array: the array itself). */
  messages: StoredMessage[];
  store: SessionStore | undefined;
}

/**
 * Opens either kind of session file read-only. A plain array is imported in
 * memory; nothing is written next to it.
 */
export async function loadSessionFile(path: string): Promise<LoadedSession> {
  const storage = new NodeFileStorage();
  const text = await storage.read(path);
  if (text === undefined) throw new Error(`No such file: ${path}`);
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) return fromJson(path, text);
  if (trimmed.startsWith('{')) {
    const firstLine = trimmed.slice(0, trimmed.indexOf('\n') >>> 0);
    if (!/"type"\s*:\s*"session"/.test(firstLine)) return fromJson(path, text);
  }
  const store = await SessionStore.open({ storage }, path);
  return { format: 'log', messages: store.active().messages, store };
}

function fromJson(path: string, text: string): LoadedSession {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is neither a Splitpoint session log nor valid JSON: ${(err as Error).message}`);
  }
  return { format: 'messages', messages: importMessages(raw, randomIds, systemClock), store: undefined };
}
