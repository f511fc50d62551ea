// Every test the documentation cites exists. A citation is an inline code span `<file> › <title>`:
// the file as `test/x.test.mjs`, `test/agents/x.test.mjs`, `agents/x` or plain `x` (test/x.test.mjs),
// the title as written in the test, where `…` (and the spaces around it) stands for any text and a trailing `(N cases)` counts
// the tests one template title makes. A test's title is any string literal of its file, quoted in
// any way, with at least 8 characters that are not `${…}` or spaces; the `${…}` parts of a template
// literal stand for any text. A citation that matches no
// title, or that is nothing but `…`, fails with the file and line it is on.
import test from 'ava';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.mjs';

const ANY = Symbol('any');

/** The documents that cite tests: README.md, docs/*.md and hooks/README.md. */
const documents = () => [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'hooks/README.md',
];

/** Each citation of a markdown text: { line, file, title, text }. Fenced blocks are not read. */
function citations(markdown) {
  const unfenced = markdown.replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '));
  const found = [];
  for (const m of unfenced.matchAll(/`([^`]+)`/g)) {
    const span = m[1].replace(/\s*\n\s*/g, ' ');
    const cite = /^(?:test\/)?((?:agents\/)?[A-Za-z0-9_-]+)(?:\.test\.mjs)? › (.+)$/.exec(span);
    if (!cite) continue;
    const line = unfenced.slice(0, m.index).split('\n').length;
    const title = cite[2].replace(/\\\|/g, '|').replace(/\s*\(\d+ cases\)$/, '');
    found.push({ line, file: `test/${cite[1]}.test.mjs`, title, text: span });
  }
  return found;
}

const ESCAPES = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', 0: '\0' };

/** A JavaScript escape sequence's text, from just after its backslash; returns [text, length]. */
function unescaped(src, i) {
  const c = src[i];
  if (c in ESCAPES) return [ESCAPES[c], 1];
  if (c === '\n') return ['', 1];
  if (c === 'x') return [String.fromCharCode(Number.parseInt(src.slice(i + 1, i + 3), 16)), 3];
  if (c === 'u' && src[i + 1] === '{') {
    const end = src.indexOf('}', i);
    return [String.fromCodePoint(Number.parseInt(src.slice(i + 2, end), 16)), end - i + 1];
  }
  if (c === 'u') return [String.fromCharCode(Number.parseInt(src.slice(i + 1, i + 5), 16)), 5];
  return [c, 1];
}

/**
 * Every string literal of a JavaScript source, as a list of pieces: text, or ANY for a template
 * literal's `${…}`. Comments and regular expression literals are skipped.
 */
function stringLiterals(src) {
  const literals = [];
  let i = 0;
  let prev = '';
  const regexMayFollow = () =>
    prev === '' || /[(,=:[!&|?{};+\-*%<>~^]$/.test(prev) || /^(return|typeof|case|in|of|void|yield|await)$/.test(prev);
  // Reads code from i until an unmatched `}` (the end of a template's `${`) or the end.
  const code = () => {
    let depth = 0;
    while (i < src.length) {
      const c = src[i];
      if (c === '/' && src[i + 1] === '/') i = src.indexOf('\n', i) === -1 ? src.length : src.indexOf('\n', i);
      else if (c === '/' && src[i + 1] === '*') i = src.indexOf('*/', i + 2) + 2;
      else if (c === "'" || c === '"') {
        const pieces = [''];
        for (i++; src[i] !== c; ) {
          if (src[i] === '\\') {
            const [text, n] = unescaped(src, i + 1);
            pieces[0] += text;
            i += n + 1;
          } else pieces[0] += src[i++];
        }
        i++;
        literals.push(pieces);
        prev = 'string';
      } else if (c === '`') {
        const pieces = [''];
        for (i++; src[i] !== '`'; ) {
          if (src[i] === '\\') {
            const [text, n] = unescaped(src, i + 1);
            pieces[pieces.length - 1] += text;
            i += n + 1;
          } else if (src[i] === '$' && src[i + 1] === '{') {
            i += 2;
            code();
            i++;
            pieces.push(ANY, '');
          } else pieces[pieces.length - 1] += src[i++];
        }
        i++;
        literals.push(pieces);
        prev = 'string';
      } else if (c === '/' && regexMayFollow()) {
        let inClass = false;
        for (i++; inClass || src[i] !== '/'; i++) {
          if (src[i] === '\\') i++;
          else if (src[i] === '[') inClass = true;
          else if (src[i] === ']') inClass = false;
        }
        for (i++; /[a-z]/.test(src[i] ?? ''); ) i++;
        prev = 'regex';
      } else if (/\s/.test(c)) i++;
      else if (/[A-Za-z0-9_$.]/.test(c)) {
        const word = /^[A-Za-z0-9_$.]+/.exec(src.slice(i, i + 200))[0];
        prev = word;
        i += word.length;
      } else {
        if (c === '{') depth++;
        if (c === '}' && depth-- === 0) return;
        prev = c;
        i++;
      }
    }
  };
  code();
  return literals;
}

/** A citation's title as pieces: `…` stands for any text. */
const citedPieces = (title) => title.split(/\s*…\s*/).flatMap((part, k) => (k === 0 ? [part] : [ANY, part]));

/** Glob characters: a literal's pieces and a citation's, each a list of characters and ANY. */
const chars = (pieces) => pieces.flatMap((p) => (p === ANY ? [ANY] : [...p]));

/**
 * Whether some title matches both a literal (its `${…}` any text) and a citation (its `…` any text),
 * with at least 8 of the citation's characters (all, when it has fewer) matched by the literal's own
 * text: `${n} objects sent` could be any title, and so could `F1: …`, but not both at once.
 */
function matches(literal, cited) {
  const a = chars(literal);
  const b = chars(cited);
  const wanted = Math.min(8, b.filter((c) => c !== ANY).length);
  const memo = new Map();
  // The most characters matched text to text from (i, j) to both ends, or -1 when they cannot match.
  const go = (i, j) => {
    const key = i * (b.length + 1) + j;
    if (memo.has(key)) return memo.get(key);
    let best = -1;
    const take = (n, more = 0) => {
      if (n >= 0) best = Math.max(best, n + more);
    };
    if (i === a.length && j === b.length) best = 0;
    else if (a[i] === ANY || b[j] === ANY) {
      if (a[i] === ANY) take(go(i + 1, j));
      if (b[j] === ANY) take(go(i, j + 1));
      if (a[i] === ANY && j < b.length) take(go(i, j + 1));
      if (b[j] === ANY && i < a.length) take(go(i + 1, j));
    } else if (i < a.length && j < b.length && a[i] === b[j]) take(go(i + 1, j + 1), 1);
    memo.set(key, best);
    return best;
  };
  return go(0, 0) >= wanted;
}

/** A literal long enough to be a title: `${a}: ${b}` would match any citation. */
const titleLike = (pieces) =>
  pieces
    .filter((p) => p !== ANY)
    .join('')
    .replace(/\s/g, '').length >= 8;

/** What is wrong with each citation of a markdown document (named `doc`), one line each. */
function staleCitations(doc, markdown, root = ROOT) {
  const problems = [];
  const titles = new Map();
  for (const c of citations(markdown)) {
    const where = `${doc}:${c.line}: \`${c.text}\``;
    const file = path.join(root, c.file);
    if (!existsSync(file)) {
      problems.push(`${where}: ${c.file} does not exist`);
      continue;
    }
    if (!titles.has(file)) titles.set(file, stringLiterals(readFileSync(file, 'utf8')).filter(titleLike));
    const cited = citedPieces(c.title);
    if (!cited.some((p) => p !== ANY && p.trim() !== '')) problems.push(`${where}: cites no title, only …`);
    else if (!titles.get(file).some((literal) => matches(literal, cited))) problems.push(`${where}: no test in ${c.file} has this title`);
  }
  return problems;
}

test('the citation checker can fail: a bogus title, a missing file and a bare … are each reported with the line they are on', (t) => {
  const doc = [
    '| a | b |',
    '| x | `docs › every test the documentation cites exists, and no other` |',
    '',
    '`test/no-such-file.test.mjs › anything`',
    '`docs › …` and `docs › the citation checker can fail: … (3 cases)`',
    '```',
    '`docs › inside a fence, not a citation`',
    '```',
    '- in a list:',
    '  ```sh',
    '  echo `date`',
    '  ```',
    '`docs › no such title after an indented fence`',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source and a title as text
    '`docs › zz9: …` matches `${where}: no test in ${c.file} has this title` only through its `${…}`',
  ].join('\n');
  t.deepEqual(staleCitations('doc.md', doc), [
    'doc.md:2: `docs › every test the documentation cites exists, and no other`: no test in test/docs.test.mjs has this title',
    'doc.md:4: `test/no-such-file.test.mjs › anything`: test/no-such-file.test.mjs does not exist',
    'doc.md:5: `docs › …`: cites no title, only …',
    'doc.md:13: `docs › no such title after an indented fence`: no test in test/docs.test.mjs has this title',
    'doc.md:14: `docs › zz9: …`: no test in test/docs.test.mjs has this title',
  ]);
});

// biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source and a title as text
test('a title is any string literal, its ${…} parts any text; escaped quotes and comments are read as JavaScript reads them', (t) => {
  const src = [
    "test('it\\'s \"quoted\"', () => {}); // `not a literal`",
    "const re = /['\"`]/g; /* 'nor this' */",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source and a title as text
    'test(`${name} under "${fault}": fsck is clean`, () => t.is(`${`inner`}`, x));',
  ].join('\n');
  const literals = stringLiterals(src).filter(titleLike);
  t.deepEqual(literals.slice(0, 1), [['it\'s "quoted"']]);
  t.true(literals.some((l) => matches(l, citedPieces('restore under "SIGKILL": fsck is clean'))));
  t.true(literals.some((l) => matches(l, citedPieces('… under "…": fsck …'))));
  t.false(literals.some((l) => matches(l, citedPieces('not a literal'))));
  t.false(literals.some((l) => matches(l, citedPieces('nor this'))));
  // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source and a title as text
  t.deepEqual(stringLiterals('`${`inner`}`'), [['inner'], ['', ANY, '']]);
});

test('every test the documentation cites exists: README.md, docs/*.md and hooks/README.md', (t) => {
  const problems = [];
  let count = 0;
  for (const doc of documents()) {
    const text = readFileSync(path.join(ROOT, doc), 'utf8');
    count += citations(text).length;
    problems.push(...staleCitations(doc, text));
  }
  t.true(count > 0, 'no citation found: the citation format changed?');
  t.deepEqual(problems, []);
});
