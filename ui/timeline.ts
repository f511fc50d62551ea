// The timeline on the left: the filter, the rows (a header per session and per turn), the
// virtualized list, the selection (which opens the row in the detail pane) and the paging that
// loads every checkpoint, the first page first.
import { foldGuards } from '../lib/model/operation-groups.js';
import { shortId as short, sessionLabel, shortSession } from '../lib/model/short-ids.js';
import { type Entry, type Rewind, type Row, type SessionInfo, api, state } from './api.js';
import { previewRestore } from './dialogs.js';
import { openRow } from './detail.js';
import { $, age, el, statsNode } from './dom.js';

const ROW_HEIGHT = 30;
const FIRST_PAGE = 200;
const NEXT_PAGE = 1000;

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

/**
 * Newest first, a header whenever the session or the turn changes: the story of each session. A restore,
 * revert or undo is one row, its guard folded in (as in `git ckpt log`), not two rows of bookkeeping.
 */
export function buildRows(): void {
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
  for (const [i, { record: e, guard }] of foldGuards(shown).entries()) {
    if (e.session !== session) {
      session = e.session;
      turn = undefined;
      rows.push({ kind: 'session', key: `s:${e.session}:${i}`, session: e.session, agent: e.agent, time: e.time });
    }
    if (e.session !== null && e.turn !== null && e.turn !== turn) {
      turn = e.turn;
      const label = e.turnLabel ?? String(e.turn);
      rows.push({
        kind: 'turn',
        key: `t:${e.session}:${e.turn}:${i}`,
        session: e.session,
        turn: e.turn,
        label,
        title: e.prompt,
        before: e,
      });
    }
    rows.push({ kind: 'checkpoint', key: e.id, entry: e, ...(guard ? { guard } : {}) });
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
    const label = row.session === null ? 'outside any agent session' : `session ${sessionLabel(row.session)}`;
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
      { class: `row turn${selected}${row.label.includes('~') ? ' left' : ''}`, title: row.title ?? '' },
      // A turn a rewind inside the agent left behind is named on its old branch: turn 2~1.
      el('span', { class: 'turn-no' }, `turn ${row.label}`),
      el('span', { class: 'title' }, row.title ? `“${row.title}”` : ''),
    );
  const e = row.entry;
  const marks = [
    e.failed ? el('span', { class: 'mark fail', title: e.error ?? 'failed' }, '✗') : null,
    e.subagent ? el('span', { class: 'mark sub', title: `subagent ${e.subagent.type ?? e.subagent.id}` }, 'sub') : null,
    e.degraded ? el('span', { class: 'mark warn', title: 'objects missing from the store' }, '⚠') : null,
    // A session forked from another (inside the agent): which one, and after which of its turns.
    e.fork
      ? el(
          'span',
          {
            class: 'mark fork',
            title: `forked from session ${e.fork.session}${e.fork.turnLabel ? ` after its turn ${e.fork.turnLabel}` : ''}`,
          },
          'fork',
        )
      : null,
    // Fetched from another machine's store: where from, and its id there.
    e.origin
      ? el(
          'span',
          { class: 'mark origin', title: `from ${e.origin.remote}, writer ${e.origin.writer}; its id there ${e.origin.source}` },
          e.origin.remote,
        )
      : null,
  ];
  return el(
    'div',
    { class: `row checkpoint${selected}`, title: e.input ?? e.message ?? '' },
    el('span', { class: 'id' }, short(e.id)),
    el('span', { class: 'tool' }, e.tool ?? e.kind),
    el('span', { class: 'what' }, e.op ? operationText(e) : (e.input ?? e.message ?? e.paths.map((p) => p.path).join(', '))),
    ...marks,
    statsNode(e.stats),
  );
}

/** An operation's row: its own words and its guard (an undo's guard is the record it undoes: said once). */
function operationText(e: Entry): string {
  const op = e.op!;
  return `${e.message ?? e.kind}${op.guard === op.target ? '' : ` · guard ${short(op.guard)}`}`;
}

/** Only the rows in view (and a few around) are in the DOM: 10,000 checkpoints scroll like 10. */
export function renderRows(): void {
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

export function select(index: number, open = true): void {
  if (index < 0 || index >= state.rows.length) return;
  state.selected = index;
  const box = $('timeline');
  const top = index * ROW_HEIGHT;
  if (top < box.scrollTop) box.scrollTop = top;
  else if (top + ROW_HEIGHT > box.scrollTop + box.clientHeight) box.scrollTop = top + ROW_HEIGHT - box.clientHeight;
  renderRows();
  if (open) void openRow(state.rows[index]!);
}

/** A line per rewind inside an agent that left the workspace out of step with the conversation, as status says it. */
function showRewinds(rewinds: Rewind[]): void {
  const notice = $('notice');
  notice.hidden = rewinds.length === 0;
  notice.replaceChildren(
    ...rewinds.map((r) => {
      const preview = el('button', { type: 'button' }, `Preview restore to before turn ${r.beforeTurn}`);
      preview.addEventListener(
        'click',
        () => void previewRestore({ target: r.address, mode: 'asof' }, `Restore to before turn ${r.beforeTurn}`),
      );
      const what = r.kind === 'code' ? `what the agent's rewind did not put back of ${r.turns}` : `${r.turns}'s changes`;
      return el(
        'p',
        {},
        `Session ${shortSession(r.session)}'s conversation was rewound to before turn ${r.beforeTurn} (${age(r.time)}); the workspace still has ${what} (${r.pending} file${r.pending === 1 ? '' : 's'}${r.shell ? `, ${r.shell} only by the shell` : ''}). `,
        preview,
      );
    }),
  );
}

export async function loadTimeline(): Promise<void> {
  const load = ++state.loading;
  const first = await api<{ total: number; records: Entry[]; sessions: SessionInfo[]; rewinds: Rewind[] }>(
    `/api/timeline?ws=${encodeURIComponent(state.ws)}&limit=${FIRST_PAGE}`,
  );
  if (load !== state.loading) return;
  showRewinds(first.rewinds);
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
