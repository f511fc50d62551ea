/**
 * Reading an agent's own transcript, for the one fact a payload leaves out.
 * Codex fires PostToolUse after a shell command that failed, with only the
 * command's output: the exit code is in the session's rollout file, already
 * written when the hook runs (`item_completed` with the call's id, its status
 * and `exit_code`). Only the file's tail is read, and nothing here throws.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

const TAIL_BYTES = 256 * 1024;

function tail(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, TAIL_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Pure: the failure of call `callId` recorded in transcript lines (JSONL), or null. @public (tests use it) */
export function callFailureIn(text: string, callId: string): string | null {
  let failure: string | null = null;
  for (const line of text.split('\n')) {
    if (!line.includes(callId)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // the first line of a tail is usually cut
    }
    const stack: unknown[] = [parsed];
    while (stack.length) {
      const v = stack.pop();
      if (!v || typeof v !== 'object') continue;
      const o = v as Record<string, unknown>;
      if ((o.id === callId || o.call_id === callId) && (typeof o.exit_code === 'number' || o.status === 'failed')) {
        const code = typeof o.exit_code === 'number' ? o.exit_code : null;
        failure = code !== null && code !== 0 ? `exit code ${code}` : o.status === 'failed' ? 'failed' : null;
      }
      stack.push(...Object.values(o));
    }
  }
  return failure;
}

/** The failure of a call as the transcript file records it, or null (unknown, unreadable, succeeded). */
export function callFailure(transcript: string, callId: string): string | null {
  try {
    return callFailureIn(tail(transcript), callId);
  } catch {
    return null;
  }
}
