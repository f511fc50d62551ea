// The shape of lib/: every file in one layer's folder, listed once in lib/README.md with whether it
// is pure; no file imports from a layer above its own; no pure file touches the disk, a process or
// the runner; no import cycle. The layers and their order are lib/README.md's sections.
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.mjs';

const LIB = path.join(ROOT, 'lib');
const files = (dir = LIB) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.relative(LIB, path.join(dir, e.name))] : [],
  );
const layerOf = (file) => (file.includes('/') ? file.split('/')[0] : '');

/** lib/README.md's map: each section's folder (in order, lowest first) and its rows. */
function moduleMap() {
  const text = readFileSync(path.join(LIB, 'README.md'), 'utf8');
  const sections = [];
  for (const line of text.split('\n')) {
    const heading = /^## (?:([a-z]+)\/|the face)/.exec(line);
    if (heading) sections.push({ layer: heading[1] ?? '', rows: [] });
    const row = /^\| `((?:[a-z-]+\/)?[a-z-]+\.ts)` \| (pure|I\/O) \|/.exec(line);
    if (row) sections.at(-1).rows.push({ file: row[1], pure: row[2] === 'pure' });
  }
  return sections;
}

/** Every relative import of a file (static, re-exports, dynamic), resolved to a lib-relative path. */
function importsOf(file) {
  const text = readFileSync(path.join(LIB, file), 'utf8');
  const specs = [...text.matchAll(/(?:\bfrom|\bimport\(?)\s*'([^']+)'/g)].map((m) => m[1]);
  return specs.map((spec) =>
    spec.startsWith('.') ? path.relative(LIB, path.join(LIB, path.dirname(file), spec)).replace(/\.js$/, '.ts') : spec,
  );
}

const sections = moduleMap();
const rank = new Map(sections.map((s, i) => [s.layer, i]));
const all = files();

test('the module map lists every lib/ file exactly once, in the section of the folder it lives in', (t) => {
  const listed = sections.flatMap((s) => s.rows.map((r) => `${s.layer ? `${s.layer}/` : ''}${r.file}`));
  t.deepEqual([...listed].sort(), [...all].sort());
  t.is(new Set(listed).size, listed.length, 'listed once');
  t.true(sections.length >= 8, 'one section a layer');
});

test('no file imports from a layer above its own, and pure files touch no disk, process or runner', (t) => {
  const pure = new Set(sections.flatMap((s) => s.rows.filter((r) => r.pure).map((r) => `${s.layer ? `${s.layer}/` : ''}${r.file}`)));
  const problems = [];
  for (const file of all) {
    for (const dep of importsOf(file)) {
      if (pure.has(file) && (dep === 'node:fs' || dep === 'node:child_process' || dep === 'git/runner.ts'))
        problems.push(`${file} is marked pure and imports ${dep}`);
      if (dep.startsWith('node:') || !dep.endsWith('.ts')) continue;
      if (rank.get(layerOf(dep)) > rank.get(layerOf(file)))
        problems.push(`${file} (${layerOf(file) || 'face'}) imports ${dep} from a layer above`);
    }
  }
  t.deepEqual(problems, []);
});

test('the import graph of lib/ has no cycle', (t) => {
  const graph = new Map(all.map((f) => [f, importsOf(f).filter((d) => d.endsWith('.ts'))]));
  const state = new Map();
  const cycles = [];
  const visit = (f, trail) => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(f)), f].join(' → '));
      return;
    }
    state.set(f, 'open');
    for (const d of graph.get(f) ?? []) visit(d, [...trail, f]);
    state.set(f, 'done');
  };
  for (const f of all) visit(f, []);
  t.deepEqual(cycles, []);
});
