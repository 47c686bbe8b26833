import type { PinItem } from '../session/schema';
import type { SessionStore } from '../session/sessionStore';
import type { Clock, IdSource } from '../session/storage';
import type { AgentTool } from './tools';
import { stringArg } from './tools';

/**
 * Adds a pin; duplicates (same text) are not added twice. The list is read
 * inside the store's commit queue, so pins added or removed meanwhile survive.
 */
export async function addPin(
  store: SessionStore,
  item: Omit<PinItem, 'id' | 'createdAt'>,
  ids: IdSource,
  clock: Clock,
): Promise<PinItem | undefined> {
  let pin: PinItem | undefined;
  await store.updatePins((pins) => {
    if (pins.some((p) => p.text === item.text)) return undefined;
    pin = { ...item, id: ids.next('pin'), createdAt: clock.now() };
    return [...pins, pin];
  });
  return pin;
}

export function pinTool(store: SessionStore, ids: IdSource, clock: Clock): AgentTool {
  return {
    spec: {
      type: 'function',
      function: {
        name: 'pin',
        description: 'Record a hard constraint or an open loop in the pinned block, which compaction never rewrites.',
        parameters: {
          type: 'object',
          properties: { text: { type: 'string' }, kind: { type: 'string', enum: ['constraint', 'open-loop'] } },
          required: ['text', 'kind'],
          additionalProperties: false,
        },
      },
    },
    needsApproval: () => false,
    describe: (args) => `pin ${String(args.kind)}: ${String(args.text)}`,
    async execute(args) {
      const text = stringArg(args, 'text').trim();
      const kind = args.kind === 'open-loop' ? 'open-loop' : args.kind === 'constraint' ? 'constraint' : undefined;
      if (!kind) return { content: '"kind" must be "constraint" or "open-loop".', isError: true };
      const pin = await addPin(store, { text, kind, source: 'agent' }, ids, clock);
      return { content: pin ? `Pinned (${kind}): ${text}` : 'Already pinned.' };
    },
  };
}
