/**
 * The one table of commands. package.json's contributes.commands and the
 * view's title-bar menu must match it exactly (test/unit/manifest.test.ts
 * checks), so a command can't be declared and forgotten, or registered and
 * left out of the manifest. This file must not import 'vscode': the test
 * reads it in plain Node.
 */

/** Context keys the host sets (see contextKeys.ts); enablement clauses use them. */
export const CONTEXT_KEYS = {
  /** A session is loaded and has at least one non-system message. */
  hasMessages: 'splitpoint.hasMessages',
  /** At least one compaction is in force. */
  canUndo: 'splitpoint.canUndo',
  /** The agent is running a turn. */
  agentRunning: 'splitpoint.agentRunning',
} as const;

export interface CommandDef {
  id: string;
  title: string;
  /** A codicon, for the view's title bar. */
  icon?: string;
  /** When clause; false greys the command out everywhere. */
  enablement?: string;
  /** Shown in the Splitpoint view's title bar: 'navigation' = an icon button, otherwise the "…" menu group. */
  viewTitle?: { group: string };
}

const inView = 'view == splitpoint.view';

export const COMMANDS = [
  { id: 'splitpoint.open', title: 'Open' },
  { id: 'splitpoint.newSession', title: 'New Session', icon: '$(add)', viewTitle: { group: 'navigation@1' } },
  {
    id: 'splitpoint.compactNow',
    title: 'Compact Now',
    icon: '$(fold)',
    enablement: CONTEXT_KEYS.hasMessages,
    viewTitle: { group: 'navigation@2' },
  },
  {
    id: 'splitpoint.compactWithFocus',
    title: 'Compact with Focus…',
    enablement: CONTEXT_KEYS.hasMessages,
    viewTitle: { group: '1_compaction@1' },
  },
  {
    id: 'splitpoint.undoCompaction',
    title: 'Undo Last Compaction',
    icon: '$(discard)',
    enablement: CONTEXT_KEYS.canUndo,
    viewTitle: { group: 'navigation@3' },
  },
  {
    id: 'splitpoint.reviewCompaction',
    title: 'Review Compaction',
    icon: '$(preview)',
    viewTitle: { group: 'navigation@4' },
  },
  { id: 'splitpoint.checkConnection', title: 'Check Server Connection', viewTitle: { group: '3_server@0' } },
  { id: 'splitpoint.setApiKey', title: 'Set API Key', viewTitle: { group: '3_server@1' } },
  { id: 'splitpoint.selectModel', title: 'Select Model', viewTitle: { group: '3_server@2' } },
  { id: 'splitpoint.exportSession', title: 'Export Session', viewTitle: { group: '2_session@1' } },
  { id: 'splitpoint.importSession', title: 'Import Session', viewTitle: { group: '2_session@2' } },
  { id: 'splitpoint.showLog', title: 'Show Log', viewTitle: { group: '4_log@1' } },
] as const satisfies readonly CommandDef[];

export type CommandId = (typeof COMMANDS)[number]['id'];
export const COMMAND_CATEGORY = 'Splitpoint';

/** The package.json contributes.commands entries this table implies. */
export function manifestCommands(): { command: string; title: string; category: string; icon?: string; enablement?: string }[] {
  return COMMANDS.map((c: CommandDef) => ({
    command: c.id,
    title: c.title,
    category: COMMAND_CATEGORY,
    ...(c.icon ? { icon: c.icon } : {}),
    ...(c.enablement ? { enablement: c.enablement } : {}),
  }));
}

/** The package.json contributes.menus["view/title"] entries this table implies. */
export function manifestViewTitleMenu(): { command: string; when: string; group: string }[] {
  return COMMANDS.filter((c: CommandDef) => c.viewTitle).map((c: CommandDef) => ({
    command: c.id,
    when: inView,
    group: c.viewTitle!.group,
  }));
}
