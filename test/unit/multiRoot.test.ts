import assert from 'node:assert/strict';
import { pickFolder, shownPath } from '../../src/host/multiRoot';

describe('multi-root workspaces: which folder a tool path is in', () => {
  const folders = [
    { name: 'web', uri: '/w/web' },
    { name: 'api', uri: '/w/api' },
  ];

  it('a path that starts with a folder name resolves in that folder; others in the first', () => {
    assert.deepEqual(pickFolder(folders, 'api/src/app.ts'), { folder: folders[1], rest: 'src/app.ts' });
    assert.deepEqual(pickFolder(folders, './api/src/app.ts'), { folder: folders[1], rest: 'src/app.ts' });
    assert.deepEqual(pickFolder(folders, 'api'), { folder: folders[1], rest: '.' });
    assert.deepEqual(pickFolder(folders, 'src/index.ts'), { folder: folders[0], rest: 'src/index.ts' });
    assert.deepEqual(pickFolder(folders, 'apis/x.ts'), { folder: folders[0], rest: 'apis/x.ts' }, 'a prefix of a name is not the folder');
    assert.equal(pickFolder([], 'x'), undefined);
  });

  it('one folder: paths are as given, a folder named like the path prefix is not stripped', () => {
    const one = [{ name: 'src', uri: '/w/src' }];
    assert.deepEqual(pickFolder(one, 'src/a.ts'), { folder: one[0], rest: 'src/a.ts' });
    assert.equal(shownPath(one, 'src', 'src/a.ts'), 'src/a.ts');
  });

  it('paths shown back to the agent name their folder when there is more than one', () => {
    assert.equal(shownPath(folders, 'api', 'src/app.ts'), 'api/src/app.ts');
    assert.equal(shownPath(folders, 'api', '.'), 'api');
  });
});
