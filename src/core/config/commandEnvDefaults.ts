/**
 * The environment variables commands get by default: what programs need to
 * run and print text, and nothing that holds a credential. Lives in the core
 * so the settings table and the Node tools share one list.
 */
export const DEFAULT_COMMAND_ENV: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TERM',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  // Windows: without these, cmd.exe and most programs cannot start.
  'SystemRoot',
  'SYSTEMROOT',
  'ComSpec',
  'COMSPEC',
  'PATHEXT',
  'WINDIR',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
];
