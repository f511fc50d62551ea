import { CkptError } from '../model/errors.js';

/**
 * A snapshot's time budget. It runs out only once the snapshot has made
 * progress (`arm()`, called after its first batch is staged): a scan that
 * alone outlasts the budget still hashes one batch, so repeated runs on a
 * huge workspace or a slow disk always converge. An outer abort is immediate.
 */
export class Deadline {
  readonly controller = new AbortController();
  private timer?: NodeJS.Timeout;
  private armed = false;
  private expired?: CkptError;
  readonly start = Date.now();
  /** Removed on dispose: a caller's signal outlives the snapshot and would keep one listener per snapshot. */
  private readonly detachOuter?: () => void;
  constructor(budgetMs: number, outer?: AbortSignal) {
    if (budgetMs > 0) {
      this.timer = setTimeout(() => {
        this.expired = new CkptError('budget', `time budget of ${budgetMs} ms ran out`);
        if (this.armed) this.controller.abort(this.expired);
      }, budgetMs);
      this.timer.unref();
    }
    if (outer?.aborted) this.controller.abort(outer.reason);
    else if (outer) {
      const onAbort = () => this.controller.abort(outer.reason);
      outer.addEventListener('abort', onAbort, { once: true });
      this.detachOuter = () => outer.removeEventListener('abort', onAbort);
    }
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  /** From now on the budget stops the snapshot (at once, if it already ran out). */
  arm(): void {
    this.armed = true;
    if (this.expired) this.controller.abort(this.expired);
  }
  elapsed(): number {
    return Date.now() - this.start;
  }
  check(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.detachOuter?.();
  }
}
