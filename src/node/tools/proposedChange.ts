import { createTwoFilesPatch } from 'diff';

/**
 * What an edit_file or write_file call would do to a file, computed before
 * it is applied. Pure, and shared: the VS Code host (which reads the open
 * editor's text and applies a WorkspaceEdit after approval) and the CLI's
 * Node tools both call it, so both keep a file's CRLF line endings.
 */
export type ProposedChange =
  | { ok: true; path: string; before: string | undefined; after: string; diff: string; summary: string }
  | { ok: false; path: string; error: string };

/** Diffs bigger than this are cut for the webview; the editor's diff view shows all of it. */
export const MAX_DIFF_CHARS = 40_000;

export function unifiedDiff(path: string, before: string | undefined, after: string): string {
  const patch = createTwoFilesPatch(
    before === undefined ? '/dev/null' : `a/${path}`,
    `b/${path}`,
    before ?? '',
    after,
    undefined,
    undefined,
    { context: 3 },
  );
  // The first line is a row of '=' the diff package adds; it carries nothing.
  const body = patch.replace(/^=+\n/, '');
  if (body.length <= MAX_DIFF_CHARS) return body;
  return `${body.slice(0, MAX_DIFF_CHARS)}\n… [diff cut: ${body.length - MAX_DIFF_CHARS} more characters; the editor's diff view shows all of it]`;
}

function lineCount(s: string): number {
  return s === '' ? 0 : s.split('\n').length;
}

export function proposeWrite(path: string, before: string | undefined, content: unknown): ProposedChange {
  if (typeof content !== 'string') return { ok: false, path, error: '"content" must be a string' };
  if (before === content) return { ok: false, path, error: `${path} already has exactly this content; nothing to write` };
  const summary =
    before === undefined
      ? `create ${path} (${lineCount(content)} lines)`
      : `overwrite ${path} (${lineCount(before)} → ${lineCount(content)} lines)`;
  return { ok: true, path, before, after: content, diff: unifiedDiff(path, before, content), summary };
}

export function proposeEdit(path: string, before: string | undefined, oldText: unknown, newText: unknown): ProposedChange {
  if (typeof oldText !== 'string' || oldText.length === 0) return { ok: false, path, error: '"old_text" must be a non-empty string' };
  if (typeof newText !== 'string') return { ok: false, path, error: '"new_text" must be a string' };
  if (before === undefined) return { ok: false, path, error: `No such file: ${path}. Use write_file to create it.` };
  let first = before.indexOf(oldText);
  let source = before;
  let target = oldText;
  let replacement = newText;
  // Models often copy text with \n from a file saved with \r\n: match on the file's own line endings.
  if (first < 0 && before.includes('\r\n') && !oldText.includes('\r\n')) {
    target = oldText.replace(/\n/g, '\r\n');
    replacement = newText.replace(/\r?\n/g, '\r\n');
    first = source.indexOf(target);
  }
  if (first < 0) return { ok: false, path, error: `old_text was not found in ${path}; read the file and copy the text exactly.` };
  if (source.indexOf(target, first + 1) >= 0)
    return { ok: false, path, error: `old_text occurs more than once in ${path}; include more surrounding lines so it is unique.` };
  source = before;
  const after = source.slice(0, first) + replacement + source.slice(first + target.length);
  if (after === before) return { ok: false, path, error: 'old_text and new_text are the same; nothing to change' };
  const line = before.slice(0, first).split('\n').length;
  return { ok: true, path, before, after, diff: unifiedDiff(path, before, after), summary: `edit ${path} at line ${line}` };
}
