// git ckpt ui: the page. No framework: one list (virtualized), one detail pane
// and one dialog, over the JSON API of lib/surfaces/ui-server.ts. Diffs are rendered by
// diff2html. Everything the page shows comes from that API; it writes only
// through POST /api/preview-diff, /api/rollback and /api/rollback-undo.
//
// This file starts the page: the workspace picker, live events, the keyboard and the filter box.
// The rest, each module importing only those below it (no cycle):
//   timeline.ts  the filter, the rows, the virtualized list, the selection, paging
//   detail.ts    a session, turn or checkpoint; the file browser, diffs, compare
//   dialogs.ts   restore, revert and undo previews, the two-step apply, applied and error dialogs
//   dom.ts       element helpers, ages, stats, a diff rendered by diff2html
//   api.ts       the fetch wrapper, the shared state, the records (types of lib/surfaces/views.ts)
import 'diff2html/bundles/css/diff2html.min.css';
import './app.css';
import { type Workspace, api, state } from './api.js';
import { closeModal, showError } from './dialogs.js';
import { $, el } from './dom.js';
import { buildRows, loadTimeline, renderRows, select } from './timeline.js';

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
