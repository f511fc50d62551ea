/** How push, bundle and fetch words a session's export: what went, and what stayed and why. */
import { withArticle } from '../lib/model/text.js';
import type { SessionExport } from '../lib/share/share.js';
import { forgetPathCommand, NO_SESSION } from '../lib/model/share-plan.js';
import { dim, formatBytes, shortId, yellow } from './format.js';

/**
 * `status` is what a push did with the session; a bundle has none (it holds the whole chain, or what the
 * last bundle did not: the export's count of new checkpoints, which pushes share, says nothing of it).
 */
export function exportLines(s: SessionExport, status?: string): string[] {
  const counts = `${s.checkpoints} checkpoint(s)${status === undefined ? '' : `, ${formatBytes(s.bytes)} new: ${status}`}`;
  const out = [`  ${s.session ?? '(no session)'}  ${counts}`];
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

/** A session as a ref names it: the checkpoints of no session have a ref part of their own (`_none`), which is no id. */
export function refSessionLabel(refPart: string): string {
  return refPart === NO_SESSION ? '(no session)' : refPart;
}
