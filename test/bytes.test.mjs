import test from 'ava';
import { symlinkSync, chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ckptJson, lsTree, sandbox, sh, storedBytes, write } from './helpers.mjs';

const CRLF = Buffer.from('line one\r\nline two\r\n');
const MIXED = Buffer.from('unix\nwindows\r\nold mac\rend');
const UTF16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo\r\n', 'utf16le')]);

test('stored bytes are the bytes on disk, whatever .gitattributes and global autocrlf say', async (t) => {
  const box = sandbox();
  // The user's global config asks for conversion, and the repository's attributes ask for every kind of it.
  sh(box, ['config', '--global', 'core.autocrlf', 'true']);
  sh(box, ['config', '--global', 'core.eol', 'crlf']);
  sh(box, ['config', '--global', 'filter.upper.clean', 'tr a-z A-Z']);
  sh(box, ['config', '--global', 'filter.upper.smudge', 'cat']);
  sh(box, ['config', '--global', 'filter.upper.required', 'true']);
  write(
    box,
    '.gitattributes',
    [
      '*.txt text',
      '*.eol text eol=lf',
      '*.id ident',
      '*.up filter=upper',
      '*.u16 working-tree-encoding=UTF-16',
      '*.auto text=auto',
      '',
    ].join('\n'),
  );
  const files = {
    'crlf.txt': CRLF,
    'mixed.txt': MIXED,
    'force.eol': CRLF,
    'keyword.id': Buffer.from('$Id: deadbeef $\r\n'),
    'shout.up': Buffer.from('lower case stays lower\n'),
    'wide.u16': UTF16,
    'guess.auto': MIXED,
    'plain.bin': Buffer.from([0, 1, 2, 13, 10, 255]),
  };
  for (const [name, bytes] of Object.entries(files)) write(box, name, bytes);
  const r = await ckptJson(box, ['snapshot']);
  for (const [name, bytes] of Object.entries(files)) {
    t.deepEqual(storedBytes(box, r.id, name), bytes, name);
  }
});

test('a CRLF edit is seen as a change, byte for byte', async (t) => {
  const box = sandbox();
  sh(box, ['config', '--global', 'core.autocrlf', 'true']);
  write(box, 'a.txt', 'x\n');
  await ckptJson(box, ['snapshot']);
  write(box, 'a.txt', 'x\r\n');
  const two = await ckptJson(box, ['snapshot']);
  t.true(two.created);
  t.deepEqual(storedBytes(box, two.id, 'a.txt'), Buffer.from('x\r\n'));
});

test('the executable bit and symlinks are stored; links are never followed', async (t) => {
  const box = sandbox();
  write(box, 'run.sh', '#!/bin/sh\necho hi\n');
  chmodSync(path.join(box.ws, 'run.sh'), 0o755);
  write(box, 'plain.txt', 'plain\n');
  mkdirSync(path.join(box.base, 'outside'));
  write(box, '../outside/secret-data.txt', 'outside\n');
  symlinkSync('plain.txt', path.join(box.ws, 'link-to-file'));
  symlinkSync('../outside', path.join(box.ws, 'link-to-outside-dir'));
  symlinkSync('does/not/exist', path.join(box.ws, 'dangling'));
  const r = await ckptJson(box, ['snapshot']);
  const entries = lsTree(box, r.id);
  t.is(entries.get('run.sh').mode, '100755');
  t.is(entries.get('plain.txt').mode, '100644');
  t.is(entries.get('link-to-file').mode, '120000');
  t.is(entries.get('link-to-outside-dir').mode, '120000');
  t.is(entries.get('dangling').mode, '120000');
  t.is(storedBytes(box, r.id, 'link-to-outside-dir').toString(), '../outside');
  t.false([...entries.keys()].some((p) => p.includes('secret-data')));
  chmodSync(path.join(box.ws, 'run.sh'), 0o644);
  const two = await ckptJson(box, ['snapshot']);
  t.true(two.created);
  t.is(lsTree(box, two.id).get('run.sh').mode, '100644');
});

test('file names with spaces, newlines, unicode, glob characters and a leading dash work', async (t) => {
  const box = sandbox();
  const names = [
    'with space.txt',
    'new\nline.txt',
    'ünïcödé-日本.txt',
    '-leading-dash.txt',
    '--output=x',
    '*.txt',
    '[ab].md',
    'back\\slash',
    'tab\there',
    'quote"s\'.txt',
    ':colon',
  ];
  for (const name of names) write(box, `dir one/${name}`, `${name}\n`);
  write(box, 'a.txt', 'a\n');
  const r = await ckptJson(box, ['snapshot']);
  const entries = lsTree(box, r.id);
  for (const name of names) {
    t.true(entries.has(`dir one/${name}`), name);
    t.is(storedBytes(box, r.id, `dir one/${name}`).toString(), `${name}\n`);
  }
  // A glob-looking name is literal: changing `*.txt` must not touch a.txt's entry.
  write(box, 'dir one/*.txt', 'changed\n');
  const two = await ckptJson(box, ['snapshot']);
  t.deepEqual(two.stats, { added: 0, modified: 1, deleted: 0 });
});

test('nested repositories and submodules are recorded as git records them, and never modified', async (t) => {
  const box = sandbox();
  write(box, 'top.txt', 'top\n');
  // An embedded clone with a commit: recorded as a gitlink to its HEAD.
  const nested = path.join(box.ws, 'vendor', 'lib');
  mkdirSync(nested, { recursive: true });
  sh(box, ['init', '-q'], { cwd: nested });
  write(box, 'vendor/lib/code.c', 'int x;\n');
  sh(box, ['add', '.'], { cwd: nested });
  sh(box, ['commit', '-qm', 'lib'], { cwd: nested });
  const nestedHead = sh(box, ['rev-parse', 'HEAD'], { cwd: nested }).stdout.trim();
  // An embedded repository with no commit yet: cannot be recorded, and is reported.
  const empty = path.join(box.ws, 'fresh');
  mkdirSync(empty);
  sh(box, ['init', '-q'], { cwd: empty });
  write(box, 'fresh/draft.txt', 'draft\n');
  const { treeState } = await import('./helpers.mjs');
  const before = [treeState(path.join(nested, '.git')), treeState(path.join(empty, '.git'))];
  const r = await ckptJson(box, ['snapshot']);
  const entries = lsTree(box, r.id);
  t.deepEqual(entries.get('vendor/lib'), { mode: '160000', type: 'commit', oid: nestedHead });
  t.false(entries.has('vendor/lib/code.c'));
  t.false([...entries.keys()].some((p) => p.startsWith('fresh')));
  t.true(r.skipped.some((s) => s.path.startsWith('fresh') && s.reason === 'nested-repo-without-commit'));
  t.true(entries.has('top.txt'));
  t.deepEqual([treeState(path.join(nested, '.git')), treeState(path.join(empty, '.git'))], before);
});

test('a real submodule (a .git file pointing into the superproject) is a gitlink, and left as it was', async (t) => {
  const upstream = sandbox({ name: 'upstream' });
  write(upstream, 'lib.c', 'int lib;\n');
  sh(upstream, ['add', '.']);
  sh(upstream, ['commit', '-qm', 'lib']);
  const box = sandbox();
  write(box, 'main.c', 'int main;\n');
  sh(box, ['add', '.']);
  sh(box, ['commit', '-qm', 'main']);
  sh(box, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', upstream.ws, 'deps/lib']);
  const head = sh(box, ['rev-parse', 'HEAD'], { cwd: path.join(box.ws, 'deps', 'lib') }).stdout.trim();
  const { treeState } = await import('./helpers.mjs');
  const before = treeState(path.join(box.ws, '.git'));
  const r = await ckptJson(box, ['snapshot']);
  const entries = lsTree(box, r.id);
  t.deepEqual(entries.get('deps/lib'), { mode: '160000', type: 'commit', oid: head });
  t.true(entries.has('.gitmodules'));
  t.false(entries.has('deps/lib/lib.c'));
  t.is(treeState(path.join(box.ws, '.git')), before);
});
