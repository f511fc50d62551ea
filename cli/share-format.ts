/** How push, bundle and fetch words a session's export: what went, and what stayed and why. */
import { withArticle } from '../lib/model/text.js';
import type { SessionExport } from '../lib/share/share.js';
import { forgetPathCommand } from '../lib/model/share-plan.js';
import { dim, formatBytes, shortId, yellow } from './format.js';

export function exportLines(s: SessionExport, status: string): string[] {
  const out = [`  ${s.session ?? '(no session)'}  ${s.checkpoints} checkpoint(s), ${formatBytes(s.bytes)} new: ${status}`];
  if (s.withheld)
    out.push(
      yellow(
        `    withheld: ${s.withheld.count} checkpoint(s) from ${shortId(s.withheld.checkpoint)} on: ${s.withheld.path} line ${s.withheld.line} looks like ${withArticle(s.withheld.rule)}; ${forgetPathCommand(s.withheld.path)} drops it from the store`,
      ),
    );
  if (s.secretCount)
    out.push(
      dim(
        `    left out (ckpt.secretPatterns): ${s.secret.join(', ')}${s.secretCount > s.secret.length ? ` and ${s.secretCount - s.secret.length} more` : ''}`,
      ),
    );
  if (s.ignoredCount)
    out.push(
      dim(
        `    left out (ignored by .gitignore; --include-ignored carries them): ${s.ignored.join(', ')}${s.ignoredCount > s.ignored.length ? ` and ${s.ignoredCount - s.ignored.length} more` : ''}`,
      ),
    );
  return out;
}
