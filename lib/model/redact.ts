/**
 * Pure: redaction of secrets in the texts git-ckpt keeps from an agent's
 * payload (input summaries, prompt titles, error lines). Each rule of the table
 * below has a test of its own (test/agent-events.test.mjs). A pattern table
 * rather than a detector package, measured: secretlint with its recommended
 * preset (the best-kept detector on npm) costs 24 ms to load and 5 ms per text
 * on the hook path, and found nothing in `curl -H "Authorization: Bearer ghp_…"`
 * (its rules target files); this table loads in 1 ms and runs in under 1 ms.
 *
 * What is replaced keeps its shape (`Bearer [REDACTED]`, `API_KEY=[REDACTED]`),
 * so the summary still says what was run.
 */

const REDACTED = '[REDACTED]';

interface Rule {
  name: string;
  pattern: RegExp;
  replace: string | ((match: string, ...groups: string[]) => string);
  /**
   * A shape that is a credential wherever it appears, in a file too (a token's own prefix, a key block);
   * the others (`NAME=value`, `--password x`) are judged only in a command or a message, where code
   * such as `API_KEY = process.env.API_KEY` does not occur.
   */
  inFiles?: true;
}

const SECRET_NAME = '[A-Za-z0-9_.-]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)[A-Za-z0-9_.-]*';

/** The table, applied in order: the most specific shapes first. @public (tests use it) */
export const REDACTION_RULES: readonly Rule[] = [
  {
    name: 'private key block',
    inFiles: true,
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|$)/g,
    replace: `-----BEGIN PRIVATE KEY----- ${REDACTED}`,
  },
  {
    name: 'authorization header',
    pattern: /\b((?:proxy-)?authorization\s*[:=]\s*["']?(?:bearer|basic|token|digest)?\s*)[^\s"']+/gi,
    replace: `$1${REDACTED}`,
  },
  // A credential has a digit or a symbol: "basic information" is not one.
  {
    name: 'bearer or basic credentials',
    pattern: /\b(bearer|basic)(\s+)(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}/gi,
    replace: `$1$2${REDACTED}`,
  },
  { name: 'credentials in a URL', pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi, replace: `$1${REDACTED}@` },
  { name: 'OpenAI or Anthropic key (sk-…)', inFiles: true, pattern: /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g, replace: REDACTED },
  { name: 'Stripe key', inFiles: true, pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,}/g, replace: REDACTED },
  { name: 'GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)', inFiles: true, pattern: /\bgh[opusr]_[A-Za-z0-9]{20,}/g, replace: REDACTED },
  { name: 'GitHub fine-grained token (github_pat_)', inFiles: true, pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, replace: REDACTED },
  { name: 'AWS access key id (AKIA…, ASIA…)', inFiles: true, pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replace: REDACTED },
  { name: 'Slack token (xox…-)', inFiles: true, pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, replace: REDACTED },
  { name: 'Google API key (AIza…)', inFiles: true, pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, replace: REDACTED },
  { name: 'npm token (npm_…)', inFiles: true, pattern: /\bnpm_[A-Za-z0-9]{36}\b/g, replace: REDACTED },
  { name: 'JSON web token', pattern: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g, replace: REDACTED },
  {
    name: 'password or token flag (--password=…, --token …)',
    pattern: /(--?(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|auth-token)(?:=|\s+))("[^"]*"|'[^']*'|[^\s"']+)/gi,
    replace: `$1${REDACTED}`,
  },
  {
    // mysql -pSECRET; elsewhere `-p` clusters such as `mkdir -p` or `tar -pczf` are left alone.
    name: 'attached password flag (-pVALUE)',
    pattern: /(^|\s)(-p)(?=\S{3,})((?=\S*[^A-Za-z\s])\S+)/g,
    replace: (_m, lead: string, flag: string) => `${lead}${flag}${REDACTED}`,
  },
  {
    name: 'NAME=value with KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL in NAME',
    pattern: new RegExp(`\\b(${SECRET_NAME}\\s*=\\s*)("[^"]*"|'[^']*'|[^\\s"';&|]+)`, 'gi'),
    replace: `$1${REDACTED}`,
  },
  {
    name: '"name": "value" with a secret name (JSON, YAML)',
    pattern: new RegExp(`(["']?${SECRET_NAME}["']?\\s*:\\s*)("[^"]*"|'[^']*'|[^\\s,}]+)`, 'gi'),
    replace: `$1${REDACTED}`,
  },
];

/** mysql and friends take the password glued to -p, even letters only. */
const MYSQL_FAMILY = /\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b/;

/**
 * What every rule needs somewhere in the text: most commands have none of it,
 * and one test is cheaper on the hook path than running the whole table.
 */
const MAYBE_SECRET =
  /key|token|secret|pass|credential|auth|bearer|basic|sk-|[rs]k_|gh[opusr]_|github_pat_|AKIA|ASIA|xox|AIza|npm_|eyJ|PRIVATE|:\/\/[^\s/]*@|(?:^|\s)-p\S/i;

/** Pure: the text with every secret shape of the table replaced. */
export function redact(text: string): string {
  if (!MAYBE_SECRET.test(text)) return text;
  let out = text;
  for (const rule of REDACTION_RULES) out = out.replace(rule.pattern, rule.replace as (substring: string, ...args: string[]) => string);
  if (MYSQL_FAMILY.test(out)) out = out.replace(/(^|\s)-p(?!\s|\[REDACTED\])\S+/g, `$1-p${REDACTED}`);
  return out;
}

const FILE_RULES = REDACTION_RULES.filter((rule) => rule.inFiles);

/** Names the rules `findSecret` applies: a cache of its verdicts is good for this table only. */
export const FILE_RULES_VERSION = FILE_RULES.map((rule) => `${rule.name}=${rule.pattern.source}`).join('\n');

const OWN_TOKEN_RULE = "git-ckpt's daemon token";

/**
 * Pure: git-ckpt's own secret, the daemon token, found in a file's bytes by its exact value (48 hex
 * digits are no shape of their own: any file may hold such a run), so in a binary file too, with the
 * line it is on. A hit withholds a push as any credential does; the caller reads the token's value.
 */
export function findOwnToken(content: Uint8Array, token: string | undefined): { rule: string; line: number } | undefined {
  if (!token) return undefined;
  const bytes = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const at = bytes.indexOf(token, 0, 'latin1');
  if (at < 0) return undefined;
  let line = 1;
  for (let i = bytes.indexOf(10); i >= 0 && i < at; i = bytes.indexOf(10, i + 1)) line++;
  return { rule: OWN_TOKEN_RULE, line };
}

/**
 * Pure: the first rule of the table whose credential shape `text` (a file's content) holds, with the line
 * it is on, or undefined. Only the rules marked `inFiles`: a checkpoint is withheld from a push for a real
 * token, not for code that names one. @public (tests use it)
 */
export function findSecret(text: string): { rule: string; line: number } | undefined {
  for (const rule of FILE_RULES) {
    const pattern = new RegExp(rule.pattern.source, rule.pattern.flags.replace('g', ''));
    const match = pattern.exec(text);
    if (match) return { rule: rule.name, line: text.slice(0, match.index).split('\n').length };
  }
  return undefined;
}

/**
 * How `findSecretInBytes` reads a file's bytes. A push's scan cache is keyed on it with the rule
 * table: a change here makes the next push read every blob again.
 */
export const BYTES_SCAN_VERSION = 'utf-8 text; utf-16 le or be, with or without a byte order mark; any file with a NUL as latin1';

/** Pure: whether bytes look like UTF-16 text: a byte order mark, or NULs on one side of every pair (ASCII text). */
function utf16Order(content: Buffer): 'le' | 'be' | undefined {
  if (content[0] === 0xff && content[1] === 0xfe) return 'le';
  if (content[0] === 0xfe && content[1] === 0xff) return 'be';
  const pairs = Math.floor(Math.min(content.length, 8000) / 2);
  if (pairs < 8) return undefined;
  let evenNul = 0;
  let oddNul = 0;
  for (let i = 0; i < pairs; i++) {
    if (content[2 * i] === 0) evenNul++;
    if (content[2 * i + 1] === 0) oddNul++;
  }
  if (oddNul >= pairs * 0.3 && evenNul <= pairs * 0.05) return 'le';
  if (evenNul >= pairs * 0.3 && oddNul <= pairs * 0.05) return 'be';
  return undefined;
}

/**
 * Pure: `findSecret` over a file's bytes, whatever they are. UTF-8 text as text; UTF-16 text (either
 * byte order, with or without a mark) decoded; and every file with a NUL in its first 8,000 bytes
 * (SQLite pages, `.pyc` files, core dumps) also as latin1, where a token's ASCII bytes stand as they
 * are. Measured here: 50 MB of random bytes in 0.2–0.3 s, 50 MB of UTF-16 text in 0.4 s; a push reads each
 * blob once (its verdict is cached in share.json).
 */
export function findSecretInBytes(content: Buffer): { rule: string; line: number } | undefined {
  const order = utf16Order(content);
  if (order) {
    const start = content[0] === 0xff || content[0] === 0xfe ? 2 : 0;
    const even = content.subarray(start, start + Math.floor((content.length - start) / 2) * 2);
    const text = order === 'le' ? even.toString('utf16le') : Buffer.from(even).swap16().toString('utf16le');
    const hit = findSecret(text);
    if (hit) return hit;
  }
  if (!order && !content.subarray(0, 8000).includes(0)) return findSecret(content.toString('utf8'));
  return findSecret(content.toString('latin1'));
}
