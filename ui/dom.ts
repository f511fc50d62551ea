// What every pane builds with: element helpers, an age in words, a checkpoint's +~- counts and a
// diff rendered by diff2html in the style the user picked.
import { html as diffHtml } from 'diff2html';
import { ColorSchemeType } from 'diff2html/lib/types';
import { type Entry, state } from './api.js';

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
export const el = <K extends keyof HTMLElementTagNameMap>(
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

export function age(time: number): string {
  const s = Math.max(0, Math.round((Date.now() - time) / 1000));
  if (s < 60) return s < 5 ? 'just now' : `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  // The date as `git ckpt show` gives it (ISO, UTC): one form on every surface, whatever the browser's locale.
  return new Date(time).toISOString().slice(0, 10);
}
export const statsNode = (s: Entry['stats']) =>
  el(
    'span',
    { class: 'stats' },
    el('span', { class: 'add' }, `+${s.added}`),
    ' ',
    el('span', { class: 'mod' }, `~${s.modified}`),
    ' ',
    el('span', { class: 'del' }, `-${s.deleted}`),
  );

export function renderDiff(diff: string, into: HTMLElement): void {
  into.innerHTML = diffHtml(diff, {
    drawFileList: false,
    matching: 'lines',
    outputFormat: state.diffStyle,
    colorScheme: ColorSchemeType.AUTO,
    diffMaxChanges: 5000,
  });
}
