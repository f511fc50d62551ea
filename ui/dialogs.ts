// The dialog: a restore's, a revert's or an undo's preview (the engine's plan and diff), applied
// in two steps with the planId of the plan shown; what was done, with its undo; and errors.
import { shortId as short } from '../lib/model/short-ids.js';
import { type Operation, api, state } from './api.js';
import { $, el, renderDiff } from './dom.js';

/**
 * Show a dialog from its first line: the modal scrolled to the top and the dialog itself focused, not a
 * button in it, so the title, the plan and its options are what a person sees first, and Enter applies
 * nothing (Esc closes; Tab reaches the buttons).
 */
function openDialog(role: 'dialog' | 'alertdialog', ...children: (Node | null)[]): void {
  const modal = $('modal');
  const dialog = el('div', { class: 'dialog', role, ariaModal: 'true', tabIndex: -1 }, ...children);
  modal.hidden = false;
  modal.replaceChildren(dialog);
  modal.scrollTop = 0;
  dialog.focus({ preventScroll: true });
}

export function closeModal(): void {
  $('modal').hidden = true;
  $('modal').replaceChildren();
  $('timeline').focus();
}

/** The plan as the engine made it: per file its action and reason, leftovers, what is never touched. */
function planView(op: Operation): HTMLElement {
  const changing = op.files;
  const table = el(
    'table',
    { class: 'plan' },
    ...changing.map((f) =>
      el(
        'tr',
        {},
        el('td', { class: `act act-${f.action}` }, f.action),
        el('td', {}, f.path),
        el('td', { class: 'muted' }, f.reason ?? ''),
      ),
    ),
  );
  const c = op.counts;
  return el(
    'div',
    {},
    el('p', { class: 'counts' }, `${c.restore ?? 0} restore · ${c.recreate ?? 0} recreate · ${c.delete ?? 0} delete · ${c.skip ?? 0} skip`),
    changing.length ? table : el('p', { class: 'hint' }, 'Nothing to write: the workspace already matches.'),
    op.leftovers.length
      ? el(
          'p',
          { class: 'muted' },
          `Left alone (not in the checkpoint): ${op.leftovers.slice(0, 30).join(', ')}${op.leftovers.length > 30 ? ' …' : ''}`,
        )
      : null,
    op.uncaptured.length
      ? el('p', { class: 'muted' }, `Never touched (not captured): ${op.uncaptured.map((u) => `${u.path} (${u.reason})`).join(', ')}`)
      : null,
  );
}

interface RestoreRequest {
  target: string;
  mode: 'asof' | 'revert';
  deleteNew?: boolean;
  /** Only these files (asof). */
  paths?: string[];
}

export async function previewRestore(request: RestoreRequest, title: string): Promise<void> {
  const modal = $('modal');
  modal.hidden = false;
  modal.replaceChildren(el('div', { class: 'dialog' }, el('p', { class: 'hint' }, 'Planning…')));
  let op: Operation;
  try {
    op = await api<Operation>('/api/preview-diff', { ws: state.ws, ...request });
  } catch (err) {
    return showError(title, err);
  }
  const deleteNew = el('input', { type: 'checkbox', checked: Boolean(request.deleteNew), id: 'delete-new' });
  deleteNew.addEventListener('change', () => void previewRestore({ ...request, deleteNew: deleteNew.checked }, title));
  const apply = el('button', { type: 'button', class: 'danger', disabled: op.files.length === 0 }, 'Apply…');
  let armed = false;
  apply.addEventListener('click', async () => {
    // Two steps: the first click asks, the second writes.
    if (!armed) {
      armed = true;
      apply.textContent = `Confirm: write ${op.files.length} file${op.files.length === 1 ? '' : 's'}`;
      return;
    }
    apply.disabled = true;
    try {
      // The plan previewed, and no other: the server refuses (409) when the files changed since.
      const done = await api<Operation>('/api/rollback', { ws: state.ws, ...request, apply: true, planId: op.planId });
      showApplied(title, done);
    } catch (err) {
      showError(title, err);
    }
  });
  const cancel = el('button', { type: 'button', class: 'ghost' }, 'Cancel');
  cancel.addEventListener('click', closeModal);
  const diff = el('div', { class: 'diff' });
  if (op.diff) renderDiff(op.diff, diff);
  openDialog(
    'dialog',
    el('h2', {}, `${title}: preview`),
    el('p', { class: 'muted' }, 'A dry run: nothing has been written. Applying first saves the current state, so it can be undone.'),
    request.mode === 'asof'
      ? el('label', { class: 'check' }, deleteNew, ' also delete files the checkpoint does not have (captured ones only)')
      : null,
    planView(op),
    op.diffTruncated ? el('p', { class: 'muted' }, 'The diff below is cut; git ckpt diff shows all of it.') : null,
    diff,
    el('div', { class: 'actions' }, apply, cancel),
  );
}

function showApplied(title: string, op: Operation): void {
  const undo = el('button', { type: 'button' }, 'Preview undo');
  undo.addEventListener('click', () => void previewUndo());
  const close = el('button', { type: 'button', class: 'ghost' }, 'Close');
  close.addEventListener('click', closeModal);
  openDialog(
    'dialog',
    el('h2', {}, `${title}: done`),
    planView(op),
    op.failures.length ? el('p', { class: 'error' }, `Failed: ${op.failures.map((f) => `${f.path}: ${f.error}`).join('; ')}`) : null,
    el('p', { class: 'guard' }, op.guard ? `The state before it is guard checkpoint ${short(op.guard)}; undo brings it back exactly.` : ''),
    el('div', { class: 'actions' }, undo, close),
  );
}

async function previewUndo(): Promise<void> {
  let op: Operation;
  try {
    op = await api<Operation>('/api/rollback-undo', { ws: state.ws, dryRun: true });
  } catch (err) {
    return showError('Undo', err);
  }
  const apply = el('button', { type: 'button', class: 'danger' }, 'Apply undo');
  apply.addEventListener('click', async () => {
    apply.disabled = true;
    try {
      showApplied('Undo', await api<Operation>('/api/rollback-undo', { ws: state.ws, apply: true, planId: op.planId }));
    } catch (err) {
      showError('Undo', err);
    }
  });
  const cancel = el('button', { type: 'button', class: 'ghost' }, 'Cancel');
  cancel.addEventListener('click', closeModal);
  const diff = el('div', { class: 'diff' });
  if (op.diff) renderDiff(op.diff, diff);
  openDialog('dialog', el('h2', {}, 'Undo: preview'), planView(op), diff, el('div', { class: 'actions' }, apply, cancel));
}

export function showError(title: string, err: unknown): void {
  const close = el('button', { type: 'button', class: 'ghost' }, 'Close');
  close.addEventListener('click', closeModal);
  openDialog(
    'alertdialog',
    el('h2', {}, title),
    el('p', { class: 'error' }, (err as Error).message),
    el('div', { class: 'actions' }, close),
  );
}

/** What `git ckpt resume` would do for a turn, and the commands the user runs: the page starts no agent. */
export async function showResume(address: string, label: string): Promise<void> {
  // A ResumeView (lib/surfaces/views.ts), the fields the page shows.
  let plan: {
    commandLine: string;
    steps: string[];
    headlessLine: string | null;
    resumeCommand: string;
    restore: { files: { action: string; path: string }[]; leftovers: string[] };
  };
  try {
    plan = await api(`/api/resume?ws=${encodeURIComponent(state.ws)}&turn=${encodeURIComponent(address)}`);
  } catch (err) {
    return showError(`Resume before turn ${label}`, err);
  }
  const close = el('button', { type: 'button', class: 'ghost' }, 'Close');
  close.addEventListener('click', closeModal);
  const { files: changing, leftovers: kept } = plan.restore;
  const files = changing.length
    ? el(
        'p',
        { class: 'muted' },
        `It restores ${changing.length} path(s) first: ${changing
          .slice(0, 12)
          .map((f) => `${f.action} ${f.path}`)
          .join(', ')}${changing.length > 12 ? ' …' : ''}`,
      )
    : el('p', { class: 'muted' }, 'The files already are as they were before that turn.');
  const leftovers = kept.length
    ? el(
        'p',
        { class: 'muted' },
        `${kept.length} file(s) that turn did not have stay as they are (add --delete-new to delete the captured ones).`,
      )
    : null;
  openDialog(
    'dialog',
    el('h2', {}, `Resume before turn ${label}`),
    el('p', {}, 'In a terminal in the workspace:'),
    el('pre', { class: 'command' }, plan.resumeCommand),
    files,
    leftovers,
    el('p', {}, 'It then opens the conversation with:'),
    el('pre', { class: 'command' }, plan.commandLine),
    ...plan.steps.map((s) => el('p', { class: 'muted' }, `and inside it: ${s}`)),
    ...(plan.headlessLine
      ? [
          el('p', { class: 'muted' }, 'or, headless, right before that prompt in a fork:'),
          el('pre', { class: 'command' }, plan.headlessLine),
        ]
      : []),
    el('div', { class: 'actions' }, close),
  );
}
