// Usage: node bench/compare.mjs <another checkout, built>   (env MODE=one|none, FILES=3000, RUNS=80)
// The same snapshot with both builds in one process, alternating: the difference of two builds
// without the minutes between two bench runs in it (bench/README.md, issue 21's comparison).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const other = process.argv[2];
if (!other) throw new Error('usage: node bench/compare.mjs <another checkout, built>');
const A = await import(path.join(path.resolve(other), 'dist', 'lib', 'index.js'));
const B = await import(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'lib', 'index.js'));
const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'cmp-')));
const home = path.join(base, 'home');
mkdirSync(home);
writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = B\n\temail = b@e.com\n');
for (const k of Object.keys(process.env)) if (k.startsWith('GIT_')) delete process.env[k];
process.env.HOME = home;
process.env.GIT_CONFIG_NOSYSTEM = '1';
const git = (args, cwd) => spawnSync('git', args, { cwd });
const N = Number(process.env.FILES ?? 3000);
const ws = path.join(base, 'ws');
const text = 'const x = 1;\n'.repeat(1000);
for (let i = 0; i < N; i++) {
  const d = path.join(ws, `pkg${i % 30}`, `mod${i % 7}`);
  mkdirSync(d, { recursive: true });
  writeFileSync(path.join(d, `file${i}.ts`), text + i);
}
git(['init', '-q'], ws);
git(['add', '-A'], ws);
git(['commit', '-qm', 'c'], ws);
const open = (M, name) => {
  process.env.GIT_CKPT_HOME = path.join(base, name);
  return M.Workspace.open(ws);
};
const wa = open(A, 'sa');
await wa.snapshot({ timeBudgetMs: 0 });
const wb = open(B, 'sb');
await wb.snapshot({ timeBudgetMs: 0 });
const mode = process.env.MODE ?? 'one';
const target = path.join(ws, 'pkg0', 'mod0', 'file0.ts');
let n = 0;
const ta = [],
  tb = [];
const med = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s[s.length >> 1];
};
for (let i = 0; i < Number(process.env.RUNS ?? 80); i++) {
  for (const [w, t, name] of i % 2
    ? [
        [wa, ta, 'sa'],
        [wb, tb, 'sb'],
      ]
    : [
        [wb, tb, 'sb'],
        [wa, ta, 'sa'],
      ]) {
    if (mode === 'one') writeFileSync(target, `// ${n++}\n${text}`);
    process.env.GIT_CKPT_HOME = path.join(base, name);
    const s = process.hrtime.bigint();
    await w.snapshot();
    t.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
}
console.log(
  `${mode}-file snapshot at ${N} files, median of ${ta.length}: ${other} ${med(ta).toFixed(2)} ms, this checkout ${med(tb).toFixed(2)} ms`,
);
