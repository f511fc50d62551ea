// Build step after tsc: the bundles a user's commands run, in dist/bin/.
// - main.js and its chunks: the whole CLI in a few files, each command a chunk
//   loaded on demand (esbuild's code splitting). One module graph of ~60 files
//   costs Node ~25 ms to load; the bundle a fraction of that.
// - hook.bundle.js: what an agent hook runs, in one file with nothing it does
//   not need. Restore, gc and fsck stay out: the workspace loads them on first
//   use, which a hook never makes, from the unbundled dist/lib/.
// - ui/: the web timeline's page (`git ckpt ui`), TypeScript and CSS bundled into
//   dist/ui/ with everything it uses (no CDN: it works offline).
import { chmodSync, copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'bin');
const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  logLevel: 'warning',
};
// CommonJS packages (commander) call require() on Node's built-ins, and an ES module has no require of
// its own. Every chunk gets one, made on first call: createRequire costs about a millisecond a chunk.
const withRequire = {
  js: "import{createRequire as __ckptRequire}from'node:module';let __ckptReq;const require=(id)=>(__ckptReq??=__ckptRequire(import.meta.url))(id);",
};

/** The workspace's on-demand modules, left out of the hook bundle: they resolve to dist/lib/ at run time. */
const LAZY_LIB = /^\.\/(restore|gc|fsck)\.js$/;
const lazyLibOutside = {
  name: 'lazy-lib-outside',
  setup(b) {
    b.onResolve({ filter: LAZY_LIB }, (args) =>
      args.kind === 'dynamic-import' ? { path: `../lib/${args.path.slice(2)}`, external: true } : undefined,
    );
  },
};

await Promise.all([
  build({
    ...common,
    entryPoints: [path.join(root, 'dist', 'cli', 'main.js')],
    outdir: out,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    banner: withRequire,
  }),
  build({
    ...common,
    entryPoints: [path.join(root, 'dist', 'cli', 'hook.js')],
    outfile: path.join(out, 'hook.bundle.js'),
    // Loaded only by the rare event that needs them (ignore: secret patterns; p-queue: the write pool).
    external: ['p-queue', 'ignore'],
    plugins: [lazyLibOutside],
  }),
]);
chmodSync(path.join(out, 'main.js'), 0o755);

const uiOut = path.join(root, 'dist', 'ui');
mkdirSync(uiOut, { recursive: true });
await build({
  entryPoints: { app: path.join(root, 'ui', 'app.ts') },
  outdir: uiOut,
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  minify: true,
  logLevel: 'warning',
});
copyFileSync(path.join(root, 'ui', 'index.html'), path.join(uiOut, 'index.html'));
