/**
 * The one table of commands. package.json's contributes.commands must match it
 * exactly (a unit test checks), so a command can't be declared and forgotten.
 */
export const COMMANDS = [
  { id: 'splitpoint.open', title: 'Open' },
  { id: 'splitpoint.showLog', title: 'Show Log' },
] as const;

export type CommandId = (typeof COMMANDS)[number]['id'];
export const COMMAND_CATEGORY = 'Splitpoint';
