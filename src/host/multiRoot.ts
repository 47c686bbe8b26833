/**
 * Multi-root workspaces: which folder a tool path belongs to. A path that
 * starts with a folder's name ("api/src/app.ts") resolves in that folder;
 * any other path in the first folder, as in a single-root workspace. Paths
 * shown back to the agent carry the folder's name whenever there is more
 * than one, so it always knows which it touched. No vscode import: tested in Node.
 */
export interface FolderRef<U> {
  name: string;
  uri: U;
}

export function pickFolder<U>(folders: readonly FolderRef<U>[], given: string): { folder: FolderRef<U>; rest: string } | undefined {
  if (folders.length === 0) return undefined;
  const norm = given.replace(/\\/g, '/').replace(/^\.\//, '');
  if (folders.length > 1) {
    for (const f of folders) {
      if (norm === f.name) return { folder: f, rest: '.' };
      if (norm.startsWith(`${f.name}/`)) return { folder: f, rest: norm.slice(f.name.length + 1) || '.' };
    }
  }
  return { folder: folders[0]!, rest: given };
}

/** "api/src/app.ts" in a multi-root workspace, "src/app.ts" in a single one. */
export function shownPath(folders: readonly { name: string }[], folderName: string, rel: string): string {
  if (folders.length <= 1) return rel;
  return rel === '.' || rel === '' ? folderName : `${folderName}/${rel}`;
}
