/**
 * A command the user is asked to approve, shown so that no part of it can hide: not below a fold, not past the
 * edge, not behind characters that do not print or that a terminal interprets. One definition for the three places
 * that ask: the side bar's approval card, the notification shown while the side bar is hidden, and the CLI prompt.
 */
import type { ApprovalView } from './messages';

// C0 controls (line breaks and tabs among them), DEL and C1 controls; bidi controls, zero-width characters and line
// and paragraph separators, which print nothing yet reorder, hide or break what follows.
const HIDDEN_CHARS = '\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff\\u2028\\u2029';
/** More than 8 blanks (spaces of any width) in a row. */
const BLANK_RUN = '[ \\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000]{9,}';

const HIDDEN_CHAR = new RegExp(`[${HIDDEN_CHARS}]`);
const BLANKS = new RegExp(BLANK_RUN);
const HIDDEN_CHAR_G = new RegExp(`[${HIDDEN_CHARS}]`, 'g');
const HIDING_G = new RegExp(`[${HIDDEN_CHARS}]|${BLANK_RUN}`, 'g');

const NAMED: Record<string, string> = { '\t': '\\t', '\r': '\\r', '\n': '\\n' };

/** A visible escape for one hidden character: \t, \r, \n, \x1b, \u202e. */
function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return NAMED[c] ?? (code < 0x100 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`);
}

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}

/** For a terminal: every hidden character as its escape, so an escape sequence is shown, never interpreted. */
export function escapeControls(text: string): string {
  return text.replace(HIDDEN_CHAR_G, escapeChar);
}

export interface CommandPart {
  text: string;
  /** Set on a stand-in for characters that would not show: what they are, for a tooltip. */
  hidden?: string;
}

/**
 * The approval card's command as plain and marked parts: a line break as ⏎ followed by the break itself, other
 * hidden characters as escapes (\t, \x1b, \u202e), and a run of more than 8 blanks as "␣×N". The card styles the
 * marked parts apart from the command's own text, which may spell "\x1b" too.
 */
export function commandParts(command: string): CommandPart[] {
  const parts: CommandPart[] = [];
  const plain = (text: string) => {
    if (!text) return;
    const last = parts[parts.length - 1];
    if (last && last.hidden === undefined) last.text += text;
    else parts.push({ text });
  };
  let at = 0;
  for (const m of command.matchAll(HIDING_G)) {
    const s = m[0];
    plain(command.slice(at, m.index));
    at = m.index + s.length;
    if (s === '\n') {
      parts.push({ text: '⏎', hidden: 'line break' });
      plain('\n');
    } else if (s.length > 1) {
      parts.push({ text: `␣×${s.length}`, hidden: `${s.length} blank characters` });
    } else {
      const code = s.charCodeAt(0);
      parts.push({ text: escapeChar(s), hidden: `${code < 0xa0 ? 'control' : 'invisible'} character U+${hex(code, 4).toUpperCase()}` });
    }
  }
  plain(command.slice(at));
  return parts;
}

/** Longer than this, a command is not offered for approval in a notification. */
export const NOTIFICATION_COMMAND_MAX = 200;

/**
 * The notification shown for an approval while the side bar is hidden. VS Code cuts a notification's text at 1000
 * characters and runs its lines together, so a long command, or one with line breaks or other hidden characters, gets
 * no one-click Approve there: the notification says it needs review in the side bar and offers to show it.
 */
export function approvalNotice(v: Pick<ApprovalView, 'command' | 'summary'>): { text: string; actions: ('Show' | 'Approve' | 'Reject')[] } {
  const c = v.command;
  if (c !== undefined && (c.length > NOTIFICATION_COMMAND_MAX || HIDDEN_CHAR.test(c) || BLANKS.test(c))) {
    const why =
      c.length > NOTIFICATION_COMMAND_MAX
        ? `${c.length} characters long`
        : /[\n\r\u2028\u2029]/.test(c)
          ? 'several lines'
          : HIDDEN_CHAR.test(c)
            ? 'control or invisible characters'
            : 'a long run of blanks';
    return { text: `Splitpoint wants to run a command that needs review in the side bar (${why}).`, actions: ['Show'] };
  }
  return { text: `Splitpoint wants to ${c ? `run "${c}"` : v.summary}.`, actions: ['Show', 'Approve', 'Reject'] };
}
