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
}

const SECRET_NAME = '[A-Za-z0-9_.-]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)[A-Za-z0-9_.-]*';

/** The table, applied in order: the most specific shapes first. @public (tests use it) */
export const REDACTION_RULES: readonly Rule[] = [
  {
    name: 'private key block',
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
  { name: 'OpenAI or Anthropic key (sk-…)', pattern: /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g, replace: REDACTED },
  { name: 'Stripe key', pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{10,}/g, replace: REDACTED },
  { name: 'GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)', pattern: /\bgh[opusr]_[A-Za-z0-9]{20,}/g, replace: REDACTED },
  { name: 'GitHub fine-grained token (github_pat_)', pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, replace: REDACTED },
  { name: 'AWS access key id (AKIA…, ASIA…)', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replace: REDACTED },
  { name: 'Slack token (xox…-)', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, replace: REDACTED },
  { name: 'Google API key (AIza…)', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, replace: REDACTED },
  { name: 'npm token (npm_…)', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g, replace: REDACTED },
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
