/**
 * The session file could not be read as a session. It has been left untouched, and
 * backed up when the open was one that writes (backupPath); read-only opens make no copy.
 */
export class SessionCorruptError extends Error {
  constructor(
    readonly path: string,
    /** 1-based line number of the first bad line. */
    readonly line: number,
    readonly reason: string,
    readonly backupPath: string | undefined,
  ) {
    super(
      `Session file ${path} is damaged at line ${line}: ${reason}. ` +
        (backupPath
          ? `A copy was saved to ${backupPath}. The file has not been changed; fix or remove that line, or import the copy as a new session.`
          : 'The file has not been changed; fix or remove that line.'),
    );
    this.name = 'SessionCorruptError';
  }
}

/** Another process holds the session's writer lock; nothing was read or written. */
export class SessionLockedError extends Error {
  constructor(
    readonly path: string,
    readonly lockPath: string,
    /** Who holds it, in words: the program, its process id and host, since when. */
    readonly holder: string,
  ) {
    super(
      `Session file ${path} is open for writing in ${holder}. Close the session there first (in VS Code, switch the ` +
        'Splitpoint view to another session or close the window; `splitpoint inspect`, and `compact` without --adopt, only read it). ' +
        `If that process is gone, delete ${lockPath}.`,
    );
    this.name = 'SessionLockedError';
  }
}

/** A plain messages array could not be imported. */
export class ImportError extends Error {
  constructor(
    readonly index: number | undefined,
    readonly reason: string,
  ) {
    super(index === undefined ? `Cannot import: ${reason}` : `Cannot import message ${index}: ${reason}`);
    this.name = 'ImportError';
  }
}

/** An operation that would break the log's invariants (undo with nothing to undo, a tail pointer that does not exist). */
export class SessionStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionStateError';
  }
}
