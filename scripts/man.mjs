// Build step: the man page git-ckpt(1) and the completion table, both made from
// the CLI's own command definitions and cli/reference.ts, the same source as
// `--help`, so none of them can drift. `git ckpt --help` (git runs
// `git help ckpt`, which opens the man page) and `git-ckpt --help` show the same text.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { helpText, COMMAND_NAMES } = await import(path.join(root, 'dist', 'cli', 'app.js'));
const { DESCRIPTION, GLOBAL_OPTIONS, REFERENCE } = await import(path.join(root, 'dist', 'cli', 'reference.js'));
const version = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version;

/** roff-escape one line of text. */
const esc = (line) => line.replace(/\\/g, '\\e').replace(/^([.'])/, '\\&$1');
const para = (text) => text.split('\n').map(esc).join('\n');

const hidden = new Set(['hook']);
const commands = COMMAND_NAMES.filter((c) => !hidden.has(c));
const out = [
  `.TH GIT-CKPT 1 "" "git-ckpt ${version}" "Git Manual"`,
  '.SH NAME',
  'git-ckpt \\- rewindable workspace checkpoints for AI coding agents',
  '.SH SYNOPSIS',
  '.nf',
  esc('git ckpt [-C <path>] [-p | --no-pager] [--color[=<when>]] <command> [<args>]'),
  ...commands.map((c) => esc(`git ckpt ${c} ...`)),
  '.fi',
  '.SH DESCRIPTION',
  para(DESCRIPTION),
  '.SH OPTIONS',
  ...GLOBAL_OPTIONS.flatMap(([term, text]) => ['.TP', `\\fB${esc(term)}\\fR`, para(text)]),
  '.SH COMMANDS',
];
const table = { commands: {}, global: ['-C', '--color', '--no-pager', '--paginate', '--help', '--version'] };
for (const name of [...commands, 'hook']) {
  const text = await helpText(name, 80);
  out.push(`.SS "git ckpt ${name}"`, '.nf', ...text.split('\n').map(esc), '.fi');
  table.commands[name] = [...new Set([...text.matchAll(/(?:^|\s)(--[a-z][a-z-]*)/gm)].map((m) => m[1]))].filter((o) => o !== '--help');
}
table.commands.help = [];
for (const section of REFERENCE) {
  out.push(`.SH ${section.title}`);
  for (const p of section.paragraphs ?? []) out.push('.PP', para(p));
  for (const [term, text] of section.rows ?? []) out.push('.TP', `\\fB${esc(term)}\\fR`, para(text));
}
out.push('.SH SEE ALSO', 'git(1), and hooks/README.md and README.md in the package.');
mkdirSync(path.join(root, 'man'), { recursive: true });
writeFileSync(path.join(root, 'man', 'git-ckpt.1'), `${out.join('\n')}\n`);
writeFileSync(path.join(root, 'dist', 'completion.json'), `${JSON.stringify(table)}\n`);
