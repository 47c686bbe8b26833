import type { ToolSpec } from '../ports';

/**
 * The agent's tool definitions, shared by the extension host and the CLI so
 * that the request prefix (system prompt + tools) is byte-identical wherever
 * the agent runs, which is what lets compaction workers reuse its cache.
 */
const obj = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

export const AGENT_TOOL_SPECS: readonly ToolSpec[] = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a text file in the workspace. Large files can be read in ranges of lines.',
      parameters: obj(
        {
          path: { type: 'string', description: 'Path relative to the workspace root.' },
          startLine: { type: 'integer', minimum: 1 },
          endLine: { type: 'integer', minimum: 1 },
        },
        ['path'],
      ),
    },
  },
  {
    type: 'function',
    function: {
      name: 'list_files',
      description: 'List files under a folder of the workspace (recursively, up to a limit).',
      parameters: obj({ path: { type: 'string', description: 'Folder relative to the workspace root; "." for the root.' } }, ['path']),
    },
  },
  {
    type: 'function',
    function: {
      name: 'search_text',
      description: 'Search the workspace for a regular expression; returns matching lines with paths and line numbers.',
      parameters: obj({ pattern: { type: 'string' }, path: { type: 'string', description: 'Optional folder to search in.' } }, ['pattern']),
    },
  },
  {
    type: 'function',
    function: {
      name: 'edit_file',
      description: "Replace one exact occurrence of old_text with new_text in a file. Needs the user's approval.",
      parameters: obj({ path: { type: 'string' }, old_text: { type: 'string' }, new_text: { type: 'string' } }, [
        'path',
        'old_text',
        'new_text',
      ]),
    },
  },
  {
    type: 'function',
    function: {
      name: 'write_file',
      description: "Create or overwrite a file with the given content. Needs the user's approval.",
      parameters: obj({ path: { type: 'string' }, content: { type: 'string' } }, ['path', 'content']),
    },
  },
  {
    type: 'function',
    function: {
      name: 'run_command',
      description:
        "Run a shell command in the workspace and return its output (truncated when long). Needs the user's approval unless allowlisted.",
      parameters: obj({ command: { type: 'string' }, timeoutSeconds: { type: 'integer', minimum: 1, maximum: 3600 } }, ['command']),
    },
  },
  {
    type: 'function',
    function: {
      name: 'recall',
      description:
        'Search, by keywords, the archived original messages that compaction summarised and the full text of tool outputs ' +
        'that were truncated; returns exact excerpts.',
      parameters: obj({ query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 20 } }, ['query']),
    },
  },
  {
    type: 'function',
    function: {
      name: 'pin',
      description: 'Record a hard constraint or an open loop in the pinned block, which compaction never rewrites.',
      parameters: obj({ text: { type: 'string' }, kind: { type: 'string', enum: ['constraint', 'open-loop'] } }, ['text', 'kind']),
    },
  },
];
