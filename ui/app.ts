// git ckpt ui: the page. No framework: one list (virtualized), one detail pane
// and one dialog, over the JSON API of lib/surfaces/ui-server.ts. Diffs are rendered by
// diff2html. Everything the page shows comes from that API; it writes only
// through POST /api/preview-diff, /api/rollback and /api/rollback-undo.
import { html as diffHtml } from 'diff2html';
import { ColorSchemeType } from 'diff2html/lib/types';
import 'diff2html/bundles/css/diff2html.min.css';
import './app.css';
import type { CheckpointView, OperationView } from '../lib/surfaces/views.js';
import { shortId, shortSession } from '../lib/model/short-ids.js';

// The records as the server sends them: the one view every surface gives (lib/surfaces/views.ts).
type Entry = CheckpointView;
type Operation = OperationView;

interface Workspace {
  id: string;
  path: string | null;
  checkpoints: number;
  current: boolean;
  missing: boolean;
}
type Row =
  | { kind: 'session'; key: string; session: string | null; agent: string | null; time: number }
  | { kind: 'turn'; key: string; session: string; turn: number; title: string | null; before: Entry }
  | { kind: 'checkpoint'; key: string; entry: Entry };

const ROW_HEIGHT = 30;
const FIRST_PAGE = 200;
const NEXT_PAGE = 1000;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const el = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<HTMLElementTagNameMap[K]> & { class?: string } = {},
  ...children: (Node | string | null)[]
) => {
  const node = document.createElement(tag);
  const { class: className, ...rest } = props;
  if (className) node.className = className;
  Object.assign(node, rest);
  for (const child of children) if (child !== null) node.append(child);
  return node;
};

interface SessionInfo {
  id: string;
  agent: string | null;
  started: number;
  turns: number;
  checkpoints: number;
}

const state = {
  ws: '' as string,
  sessions: new Map<string, SessionInfo>(),
  entries: [] as Entry[],
  total: 0,
  rows: [] as Row[],
  selected: -1,
  filter: '',
  diffStyle: (localStorage.getItem('ckpt-diff-style') as 'side-by-side' | 'line-by-line') ?? 'line-by-line',
  loading: 0,
  /** Counts row openings, so that a slow answer for a row left behind is dropped. */
  opening: 0,
};

async function api<T>(pathAndQuery: string, body?: unknown): Promise<T> {
  const res = await fetch(pathAndQuery, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const json = (await res.json()) as { ok: boolean; error?: string } & T;
  if (!json.ok) throw new Error(json.error ?? `HTTP ${res.status}`);
  return json;
}

const short = shortId;
function age(time: number): string {
  const s = Math.max(0, Math.round((Date.now() - time) / 1000));
  if (s < 60) return s < 5 ? 'just now' : `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(time).toLocaleDateString();
}
const statsNode = (s: CheckpointView['stats']) =>
  el(
    'span',
    { class: 'stats' },
    el('span', { class: 'add' }, `+${s.added}`),
    ' ',
    el('span', { class: 'mod' }, `~${s.modified}`),
    ' ',
    el('span', { class: 'del' }, `-${s.deleted}`),
  );

/** Whether an entry passes the filter: free words, and path:, tool:, agent:, session: terms. */
function matches(e: Entry, filter: string): boolean {
  for (const term of filter.toLowerCase().split(/\s+/).filter(Boolean)) {
    const [key, value] = term.includes(':') ? [term.slice(0, term.indexOf(':')), term.slice(term.indexOf(':') + 1)] : ['', term];
    const paths = e.paths.map((p) => p.path.toLowerCase());
    const ok =
      key === 'path'
        ? paths.some((p) => p.includes(value))
        : key === 'tool'
          ? (e.tool ?? '').toLowerCase().includes(value)
          : key === 'agent'
            ? (e.agent ?? '').toLowerCase().includes(value)
            : key === 'session'
              ? (e.session ?? '').toLowerCase().startsWith(value)
              : [e.id, e.tool, e.input, e.message, e.prompt, e.kind, ...paths].some((t) => (t ?? '').toLowerCase().includes(term));
    if (!ok) return false;
  }
  return true;
}

/** Newest first, a header whenever the session or the turn changes: the story of each session. */
function buildRows(): void {
  const rows: Row[] = [];
  let session: string | null | undefined;
  let turn: number | null | undefined;
  const shown = state.entries.filter((e) => matches(e, state.filter));
  // Say what the list covers: a filter typed while older pages still load sees only what has arrived.
  const loaded = state.entries.length;
  const loading = loaded < state.total ? ` (loading ${loaded} of ${state.total})` : '';
  $('count').textContent = state.filter
    ? `${shown.length} of ${loaded} checkpoints${loading}`
    : loading
      ? `${state.total} checkpoints${loading}`
      : `${state.total} checkpoints`;
  for (const [i, e] of shown.entries()) {
    if (e.session !== session) {
      session = e.session;
      turn = undefined;
      rows.push({ kind: 'session', key: `s:${e.session}:${i}`, session: e.session, agent: e.agent, time: e.time });
    }
    if (e.session !== null && e.turn !== null && e.turn !== turn) {
      turn = e.turn;
      rows.push({ kind: 'turn', key: `t:${e.session}:${e.turn}:${i}`, session: e.session, turn: e.turn, title: e.prompt, before: e });
    }
    rows.push({ kind: 'checkpoint', key: e.id, entry: e });
  }
  state.rows = rows;
  ($('rows') as HTMLElement).style.height = `${rows.length * ROW_HEIGHT}px`;
  renderRows();
}

/** A session header's right side: how many turns, and when it started. */
function sessionSummary(session: string | null, time: number): string {
  const info = session === null ? undefined : state.sessions.get(session);
  if (!info) return age(time);
  return `${info.turns} turn${info.turns === 1 ? '' : 's'} · started ${age(info.started)}`;
}

function rowNode(row: Row, index: number): HTMLElement {
  const selected = index === state.selected ? ' selected' : '';
  if (row.kind === 'session') {
    const label = row.session === null ? 'outside any agent session' : `session ${shortSession(row.session)}`;
    return el(
      'div',
      { class: `row session${selected}`, title: row.session ?? '' },
      el('span', { class: 'agent' }, row.agent ?? ''),
      el('span', {}, label),
      el('span', { class: 'when' }, sessionSummary(row.session, row.time)),
    );
  }
  if (row.kind === 'turn')
    return el(
      'div',
      { class: `row turn${selected}`, title: row.title ?? '' },
      el('span', { class: 'turn-no' }, `turn ${row.turn}`),
      el('span', { class: 'title' }, row.title ? `“${row.title}”` : ''),
    );
  const e = row.entry;
  const marks = [
    e.failed ? el('span', { class: 'mark fail', title: e.error ?? 'failed' }, '✗') : null,
    e.subagent ? el('span', { class: 'mark sub', title: `subagent ${e.subagent.type ?? e.subagent.id}` }, 'sub') : null,
    e.degraded ? el('span', { class: 'mark warn', title: 'objects missing from the store' }, '⚠') : null,
  ];
  return el(
    'div',
    { class: `row checkpoint${selected}`, title: e.input ?? e.message ?? '' },
    el('span', { class: 'id' }, short(e.id)),
    el('span', { class: 'tool' }, e.tool ?? e.kind),
    el('span', { class: 'what' }, e.input ?? e.message ?? e.paths.map((p) => p.path).join(', ')),
    ...marks,
    statsNode(e.stats),
  );
}

/** Only the rows in view (and a few around) are in the DOM: 10,000 checkpoints scroll like 10. */
function renderRows(): void {
  const box = $('timeline');
  const first = Math.max(0, Math.floor(box.scrollTop / ROW_HEIGHT) - 10);
  const last = Math.min(state.rows.length, Math.ceil((box.scrollTop + box.clientHeight) / ROW_HEIGHT) + 10);
  const nodes: HTMLElement[] = [];
  for (let i = first; i < last; i++) {
    const node = rowNode(state.rows[i]!, i);
    node.style.top = `${i * ROW_HEIGHT}px`;
    node.dataset.index = String(i);
    nodes.push(node);
  }
  $('rows').replaceChildren(...nodes);
}

function select(index: number, open = true): void {
  if (index < 0 || index >= state.rows.length) return;
  state.selected = index;
  const box = $('timeline');
  const top = index * ROW_HEIGHT;
  if (top < box.scrollTop) box.scrollTop = top;
  else if (top + ROW_HEIGHT > box.scrollTop + box.clientHeight) box.scrollTop = top + ROW_HEIGHT - box.clientHeight;
  renderRows();
  if (open) void openRow(state.rows[index]!);
}

async function loadTimeline(): Promise<void> {
  const load = ++state.loading;
  const first = await api<{ total: number; records: Entry[]; sessions: SessionInfo[] }>(
    `/api/timeline?ws=${encodeURIComponent(state.ws)}&limit=${FIRST_PAGE}`,
  );
  if (load !== state.loading) return;
  state.sessions = new Map(first.sessions.map((x) => [x.id, x]));
  const selectedKey = state.rows[state.selected]?.key;
  state.entries = first.records;
  state.total = first.total;
  buildRows();
  if (selectedKey) state.selected = state.rows.findIndex((r) => r.key === selectedKey);
  renderRows();
  // The rest in the background, so that the filter sees every checkpoint.
  for (let offset = first.records.length; offset < first.total; offset += NEXT_PAGE) {
    const page = await api<{ records: Entry[] }>(`/api/timeline?ws=${encodeURIComponent(state.ws)}&offset=${offset}&limit=${NEXT_PAGE}`);
    if (load !== state.loading) return;
    state.entries.push(...page.records);
    buildRows();
  }
}

function renderDiff(diff: string, into: HTMLElement): void {
  into.innerHTML = diffHtml(diff, {
    drawFileList: false,
    matching: 'lines',
    outputFormat: state.diffStyle,
    colorScheme: ColorSchemeType.AUTO,
    diffMaxChanges: 5000,
  });
}

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

async function openRow(row: Row): Promise<void> {
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
    const address = `turn:${row.turn}@${row.session}`;
    const preview = el('button', { type: 'button' }, `Preview restore to before turn ${row.turn}`);
    preview.addEventListener('click', () => void previewRestore({ target: address, mode: 'asof' }, `Restore to before turn ${row.turn}`));
    const revertTurn = el('button', { type: 'button', class: 'ghost' }, `Preview revert of turn ${row.turn}’s tool calls`);
    const range = `turn:${row.turn}..turn:${row.turn}@${row.session}`;
    revertTurn.addEventListener('click', () => void previewRestore({ target: range, mode: 'revert' }, `Revert turn ${row.turn}`));
    detail.replaceChildren(
      el('h2', {}, `Turn ${row.turn}`),
      el('p', { class: 'prompt' }, row.title ? `“${row.title}”` : '(no prompt recorded)'),
      el('p', { class: 'muted' }, `session ${row.session}`),
      el('div', { class: 'actions' }, preview, revertTurn),
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
    ['when', `${new Date(e.time).toLocaleString()} (${age(e.time)})`],
    ['what', [e.agent, e.kind, e.tool].filter(Boolean).join(' · ')],
    ['input', e.input ?? ''],
    ['message', e.message ?? ''],
    ['session', e.session ? `${e.session} · turn ${e.turn ?? '-'} · step ${e.step ?? '-'}` : ''],
    ['failed', e.failed ? (e.error ?? 'yes') : ''],
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

function closeModal(): void {
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

async function previewRestore(request: RestoreRequest, title: string): Promise<void> {
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
  modal.replaceChildren(
    el(
      'div',
      { class: 'dialog', role: 'dialog', ariaModal: 'true' },
      el('h2', {}, `${title}: preview`),
      el('p', { class: 'muted' }, 'A dry run: nothing has been written. Applying first saves the current state, so it can be undone.'),
      request.mode === 'asof'
        ? el('label', { class: 'check' }, deleteNew, ' also delete files the checkpoint does not have (captured ones only)')
        : null,
      planView(op),
      op.diffTruncated ? el('p', { class: 'muted' }, 'The diff below is cut; git ckpt diff shows all of it.') : null,
      diff,
      el('div', { class: 'actions' }, apply, cancel),
    ),
  );
  apply.focus();
}

function showApplied(title: string, op: Operation): void {
  const undo = el('button', { type: 'button' }, 'Preview undo');
  undo.addEventListener('click', () => void previewUndo());
  const close = el('button', { type: 'button', class: 'ghost' }, 'Close');
  close.addEventListener('click', closeModal);
  $('modal').replaceChildren(
    el(
      'div',
      { class: 'dialog', role: 'dialog' },
      el('h2', {}, `${title}: done`),
      planView(op),
      op.failures.length ? el('p', { class: 'error' }, `Failed: ${op.failures.map((f) => `${f.path}: ${f.error}`).join('; ')}`) : null,
      el(
        'p',
        { class: 'guard' },
        op.guard ? `The state before it is guard checkpoint ${short(op.guard)}; undo brings it back exactly.` : '',
      ),
      el('div', { class: 'actions' }, undo, close),
    ),
  );
  undo.focus();
}

async function previewUndo(): Promise<void> {
  let op: Operation;
  try {
    op = await api<Operation>('/api/rollback-undo', { ws: state.ws });
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
  $('modal').replaceChildren(
    el(
      'div',
      { class: 'dialog', role: 'dialog' },
      el('h2', {}, 'Undo: preview'),
      planView(op),
      diff,
      el('div', { class: 'actions' }, apply, cancel),
    ),
  );
  apply.focus();
}

function showError(title: string, err: unknown): void {
  const close = el('button', { type: 'button', class: 'ghost' }, 'Close');
  close.addEventListener('click', closeModal);
  $('modal').hidden = false;
  $('modal').replaceChildren(
    el(
      'div',
      { class: 'dialog', role: 'alertdialog' },
      el('h2', {}, title),
      el('p', { class: 'error' }, (err as Error).message),
      el('div', { class: 'actions' }, close),
    ),
  );
}

let events: EventSource | undefined;
function watchLive(): void {
  events?.close();
  events = new EventSource(`/api/events?ws=${encodeURIComponent(state.ws)}`);
  events.addEventListener('ledger', () => void loadTimeline());
  events.addEventListener('open', () => $('live').classList.add('on'));
  events.addEventListener('error', () => $('live').classList.remove('on'));
}

async function start(): Promise<void> {
  const summary = await api<{ workspaces: Workspace[]; current: string | null }>('/api/summary');
  const picker = $<HTMLSelectElement>('workspace');
  for (const w of summary.workspaces)
    picker.append(
      el(
        'option',
        { value: w.id, selected: w.id === summary.current },
        `${w.path ?? w.id}${w.missing ? ' (gone)' : ''} · ${w.checkpoints}`,
      ),
    );
  picker.addEventListener('change', () => {
    state.ws = picker.value;
    state.selected = -1;
    $('detail').replaceChildren(el('p', { class: 'hint' }, 'Pick a checkpoint or a turn on the left.'));
    watchLive();
    void loadTimeline();
  });
  if (!summary.current) {
    $('detail').replaceChildren(
      el('p', { class: 'hint' }, 'No checkpoints yet: run git ckpt snapshot, or let an agent with git-ckpt hooks work.'),
    );
    return;
  }
  state.ws = summary.current;
  watchLive();
  await loadTimeline();
}

$('timeline').addEventListener('scroll', () => requestAnimationFrame(renderRows), { passive: true });
$('rows').addEventListener('click', (ev) => {
  const row = (ev.target as HTMLElement).closest<HTMLElement>('.row');
  if (row?.dataset.index) select(Number(row.dataset.index));
});
const filter = $<HTMLInputElement>('filter');
filter.addEventListener('input', () => {
  state.filter = filter.value;
  state.selected = -1;
  buildRows();
});
document.addEventListener('keydown', (ev) => {
  const typing = ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement;
  if (ev.key === 'Escape') {
    if (!$('modal').hidden) closeModal();
    else if (typing) (ev.target as HTMLElement).blur();
    return;
  }
  if (typing || !$('modal').hidden) return;
  if (ev.key === '/') {
    ev.preventDefault();
    filter.focus();
  } else if (ev.key === 'j' || ev.key === 'ArrowDown') {
    ev.preventDefault();
    select(state.selected + 1, false);
  } else if (ev.key === 'k' || ev.key === 'ArrowUp') {
    ev.preventDefault();
    select(Math.max(0, state.selected - 1), false);
  } else if (ev.key === 'Enter' && state.selected >= 0) {
    select(state.selected, true);
  }
});
start().catch((err) => showError('git ckpt ui', err));
