// The detail pane on the right: a session, a turn or a checkpoint with its actions, the file
// browser and its diffs, and a compare of two points. Restores and reverts open a dialog.
import { shortId as short, shortSession } from '../lib/model/short-ids.js';
import { type Entry, type Row, api, state } from './api.js';
import { previewRestore, showError, showResume } from './dialogs.js';
import { $, age, el, renderDiff, statsNode } from './dom.js';

function diffStyleToggle(onChange: () => void): HTMLElement {
  const button = el('button', { class: 'ghost', type: 'button' }, state.diffStyle === 'side-by-side' ? 'unified' : 'side by side');
  button.addEventListener('click', () => {
    state.diffStyle = state.diffStyle === 'side-by-side' ? 'line-by-line' : 'side-by-side';
    localStorage.setItem('ckpt-diff-style', state.diffStyle);
    onChange();
  });
  return button;
}

/** A list of files; clicking one shows its diff below. `diffUrl(path)` names the file-diff request. */
function fileBrowser(
  files: { status: string; path: string }[],
  diffUrl: (path: string) => string,
  fileAction?: { label: string; run: (path: string) => void },
): HTMLElement {
  const list = el('ul', { class: 'files' });
  const diff = el('div', { class: 'diff' });
  let current: string | undefined;
  const action = fileAction ? el('button', { type: 'button', class: 'ghost', disabled: true }, fileAction.label) : null;
  action?.addEventListener('click', () => current && fileAction!.run(current));
  const show = async (file: string) => {
    current = file;
    if (action) action.disabled = false;
    for (const li of list.children) li.classList.toggle('active', (li as HTMLElement).dataset.path === file);
    diff.replaceChildren(el('p', { class: 'hint' }, 'loading…'));
    const r = await api<{ diff: string; truncated: boolean; note?: string }>(diffUrl(file));
    if (current !== file) return;
    if (r.truncated) diff.replaceChildren(el('p', { class: 'hint' }, r.note ?? 'too large to show'));
    else if (!r.diff) diff.replaceChildren(el('p', { class: 'hint' }, 'no difference'));
    else renderDiff(r.diff, diff);
  };
  for (const f of files) {
    const li = el('li', { tabIndex: 0 }, el('span', { class: `st st-${f.status[0]}` }, f.status[0] ?? ''), el('span', {}, f.path));
    li.dataset.path = f.path;
    li.addEventListener('click', () => void show(f.path));
    li.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') void show(f.path);
    });
    list.append(li);
  }
  if (files[0]) void show(files[0].path);
  const toggle = diffStyleToggle(() => current && void show(current));
  const head = el(
    'div',
    { class: 'files-head' },
    el('span', {}, `${files.length} file${files.length === 1 ? '' : 's'}`),
    el('span', { class: 'tools' }, action, toggle),
  );
  return el('div', { class: 'browser' }, head, list, diff);
}

export async function openRow(row: Row): Promise<void> {
  const detail = $('detail');
  const opening = ++state.opening;
  if (row.kind === 'session') {
    const actions: HTMLElement[] = [];
    if (row.session) {
      // Every turn of the session: a range no session reaches the end of.
      const session = row.session;
      const revert = el('button', { type: 'button', class: 'ghost' }, 'Preview revert of this session’s tool calls');
      const range = `turn:1..turn:${Number.MAX_SAFE_INTEGER}@${session}`;
      revert.addEventListener(
        'click',
        () => void previewRestore({ target: range, mode: 'revert' }, `Revert session ${shortSession(session)}`),
      );
      actions.push(revert);
    }
    detail.replaceChildren(
      el('h2', {}, row.session ? `Session ${row.session}` : 'Outside any agent session'),
      el('p', { class: 'muted' }, row.agent ? `agent: ${row.agent}` : ''),
      el(
        'p',
        { class: 'muted' },
        row.session
          ? 'A revert undoes what this session’s tool calls changed and keeps everything else (your edits, other sessions), three-way.'
          : '',
      ),
      el('div', { class: 'actions' }, ...actions),
    );
    return;
  }
  if (row.kind === 'turn') {
    const address = `turn:${row.label}@${row.session}`;
    const left = row.label.includes('~');
    const preview = el('button', { type: 'button' }, `Preview restore to before turn ${row.label}`);
    preview.addEventListener('click', () => void previewRestore({ target: address, mode: 'asof' }, `Restore to before turn ${row.label}`));
    const resume = el('button', { type: 'button', class: 'ghost' }, `Resume the conversation before turn ${row.label}`);
    resume.addEventListener('click', () => void showResume(address, row.label));
    const actions = [preview, resume];
    // A revert's turn range counts the current branch: offered for its turns only.
    if (!left) {
      const revertTurn = el('button', { type: 'button', class: 'ghost' }, `Preview revert of turn ${row.label}’s tool calls`);
      const range = `turn:${row.label}..turn:${row.label}@${row.session}`;
      revertTurn.addEventListener('click', () => void previewRestore({ target: range, mode: 'revert' }, `Revert turn ${row.label}`));
      actions.push(revertTurn);
    }
    detail.replaceChildren(
      el('h2', {}, `Turn ${row.label}`),
      el('p', { class: 'prompt' }, row.title ? `“${row.title}”` : '(no prompt recorded)'),
      el('p', { class: 'muted' }, `session ${row.session}${left ? ' · on a branch a rewind inside the agent left behind' : ''}`),
      el('div', { class: 'actions' }, ...actions),
    );
    return;
  }
  const e = row.entry;
  detail.replaceChildren(el('p', { class: 'hint' }, 'loading…'));
  let info: { files: { status: string; path: string }[]; base: { id: string | null; reason: string } | null };
  try {
    info = await api<{ files: { status: string; path: string }[]; base: { id: string | null; reason: string } | null }>(
      `/api/checkpoint?ws=${encodeURIComponent(state.ws)}&id=${e.id}`,
    );
  } catch (err) {
    if (opening === state.opening) detail.replaceChildren(el('p', { class: 'error' }, (err as Error).message));
    return;
  }
  // Another row was opened meanwhile: its answer wins.
  if (opening !== state.opening) return;
  const restore = el('button', { type: 'button' }, 'Preview restore to here');
  restore.addEventListener('click', () => void previewRestore({ target: e.id, mode: 'asof' }, `Restore to ${short(e.id)}`));
  const revert = el('button', { type: 'button', class: 'ghost' }, 'Preview revert of this change');
  revert.addEventListener('click', () => void previewRestore({ target: e.id, mode: 'revert' }, `Revert ${short(e.id)}`));
  const compare = el('button', { type: 'button', class: 'ghost' }, 'Compare with the workspace now');
  compare.addEventListener('click', () => void compareWith(e, undefined));
  // Any two points: an id prefix, latest~N or turn:N typed here, against this checkpoint.
  const other = el('input', { type: 'text', placeholder: 'id, latest~N, turn:N', ariaLabel: 'compare with', size: 16 });
  const compareOther = el('button', { type: 'button', class: 'ghost' }, 'Compare with…');
  const runCompare = () => other.value.trim() && void compareWith(e, other.value.trim());
  compareOther.addEventListener('click', runCompare);
  other.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') runCompare();
  });
  const facts = [
    ['when', `${new Date(e.time).toISOString()} (${age(e.time)})`],
    ['what', [e.agent, e.kind, e.tool].filter(Boolean).join(' · ')],
    ['input', e.input ?? ''],
    ['message', e.message ?? ''],
    [
      'guard',
      e.op
        ? `${short(e.op.guard)}: the workspace just before it, where undo returns${row.guard?.changed ? ` (it captured +${row.guard.stats.added} ~${row.guard.stats.modified} -${row.guard.stats.deleted} first)` : ''}`
        : '',
    ],
    ['session', e.session ? `${e.session} · turn ${e.turnLabel ?? '-'} · step ${e.step ?? '-'}` : ''],
    ['failed', e.failed ? (e.error ?? 'yes') : ''],
    ['from', e.origin ? `${e.origin.remote}, writer ${e.origin.writer} (its id there ${short(e.origin.source)})` : ''],
    ['base', info.base ? `diff from ${info.base.id ? short(info.base.id) : 'nothing'} (${info.base.reason})` : ''],
    ['not captured', e.skippedCount ? `${e.skippedCount} path(s): see git ckpt show` : ''],
  ].filter(([, v]) => v);
  detail.replaceChildren(
    el('h2', {}, el('code', {}, short(e.id)), ' ', statsNode(e.stats)),
    el('dl', { class: 'facts' }, ...facts.flatMap(([k, v]) => [el('dt', {}, k!), el('dd', {}, v!)])),
    el('div', { class: 'actions' }, restore, revert, compare, el('span', { class: 'compare' }, other, compareOther)),
    fileBrowser(info.files, (p) => `/api/file-diff?ws=${encodeURIComponent(state.ws)}&to=${e.id}&path=${encodeURIComponent(p)}`, {
      label: 'Preview restore of this file',
      run: (p) => void previewRestore({ target: e.id, mode: 'asof', paths: [p] }, `Restore ${p} to ${short(e.id)}`),
    }),
  );
}

/** What changed from another point (`from`, or this checkpoint) to this checkpoint (or, with no `from`, from it to the workspace now). */
async function compareWith(e: Entry, from: string | undefined): Promise<void> {
  const detail = $('detail');
  const back = el('button', { type: 'button', class: 'ghost' }, '← back');
  back.addEventListener('click', () => state.selected >= 0 && void openRow(state.rows[state.selected]!));
  const ws = encodeURIComponent(state.ws);
  const range = from === undefined ? `from=${e.id}` : `from=${encodeURIComponent(from)}&to=${e.id}`;
  let r: { files: { status: string; path: string }[] };
  try {
    r = await api(`/api/compare?ws=${ws}&${range}`);
  } catch (err) {
    return showError('Compare', err);
  }
  detail.replaceChildren(
    el('h2', {}, from === undefined ? `${short(e.id)} → the workspace now` : `${from} → ${short(e.id)}`),
    el('div', { class: 'actions' }, back),
    r.files.length
      ? fileBrowser(r.files, (p) => `/api/file-diff?ws=${ws}&${range}&path=${encodeURIComponent(p)}`)
      : el('p', { class: 'hint' }, 'No difference.'),
  );
}
