// Build step: the man page git-ckpt(1), docs/reference.md and the completion table, all made from
// the CLI's own command definitions and cli/reference.ts, the same source as `--help`, so none of
// them can drift (scripts/reference.mjs renders them). `git ckpt --help` (git runs `git help ckpt`,
// which opens the man page) and `git-ckpt --help` show the same text.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderMan, renderMarkdown, ROOT } from './reference.mjs';

const { man, completion } = await renderMan();
mkdirSync(path.join(ROOT, 'man'), { recursive: true });
writeFileSync(path.join(ROOT, 'man', 'git-ckpt.1'), man);
writeFileSync(path.join(ROOT, 'dist', 'completion.json'), completion);
// docs/ is in a checkout, not in the package: an installed copy has no reference to refresh.
if (existsSync(path.join(ROOT, 'docs'))) writeFileSync(path.join(ROOT, 'docs', 'reference.md'), await renderMarkdown());
