// The page's data: the records as the server sends them (the one view every surface gives,
// lib/surfaces/views.ts), the state every part of the page reads and writes, and the one fetch
// wrapper (GET, or POST with a JSON body; an answer without ok: true throws its error). No elements.
import type { CheckpointView, OperationView, PendingRewind } from '../lib/surfaces/views.js';

export type Rewind = PendingRewind;

export type Entry = CheckpointView;
export type Operation = OperationView;

export interface Workspace {
  id: string;
  path: string | null;
  checkpoints: number;
  current: boolean;
  missing: boolean;
}
export type Row =
  | { kind: 'session'; key: string; session: string | null; agent: string | null; time: number }
  | { kind: 'turn'; key: string; session: string; turn: number; label: string; title: string | null; before: Entry }
  | { kind: 'checkpoint'; key: string; entry: Entry; guard?: Entry };

export interface SessionInfo {
  id: string;
  agent: string | null;
  started: number;
  turns: number;
  checkpoints: number;
}

export const state = {
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

export async function api<T>(pathAndQuery: string, body?: unknown): Promise<T> {
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
