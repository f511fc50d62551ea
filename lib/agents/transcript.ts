/**
 * Reading an agent's own transcript, for the one fact a payload leaves out.
 * Codex fires PostToolUse after a shell command that failed, with only the
 * command's output: the exit code is in the session's rollout file, already
 * written when the hook runs (`item_completed` with the call's id, its status
 * and `exit_code`). The path comes from the payload, so it is untrusted: only a
 * regular file is opened (a FIFO would block the open forever, a device never
 * ends), only its tail is read, and the read is given up when the time allowed
 * runs out. Nothing here throws.
 */
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';

const TAIL_BYTES = 256 * 1024;

export interface TranscriptRead {
  /** `exit code N` or `failed`; null when the call succeeded or the transcript does not say. */
  failure: string | null;
  /** Why the transcript was not read (for the hook log). */
  problem?: string;
}

/**
 * Up to `max` bytes of a transcript from `offset` (from its start when it is
 * shorter than that now: rewritten), and its size. Throws on a file that is
 * not a regular one.
 */
export async function readTranscriptFrom(
  file: string,
  offset: number,
  max: number,
): Promise<{ chunk: Buffer; from: number; size: number }> {
  // lstat, then O_NOFOLLOW and O_NONBLOCK: a file swapped for a link or a FIFO after the check still cannot block us.
  if (!(await lstat(file)).isFile()) throw new Error('is not a regular file');
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error('is not a regular file');
    const size = st.size;
    const from = offset > size || offset < 0 ? 0 : offset;
    const length = Math.min(size - from, max);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, from);
    return { chunk: buffer.subarray(0, bytesRead), from, size };
  } finally {
    await handle.close();
  }
}

async function tail(file: string): Promise<string> {
  const size = (await lstat(file)).size;
  return (await readTranscriptFrom(file, Math.max(0, size - TAIL_BYTES), TAIL_BYTES)).chunk.toString('utf8');
}

/** `work`, or a rejection once `withinMs` has passed (a file on a stalled mount must not outlast the hook's budget). */
export async function withinTime<T>(work: Promise<T>, withinMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`was not read within ${withinMs} ms`)), Math.max(0, withinMs));
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The failure of a call as the transcript file records it, read within `withinMs`
 * (a file on a stalled disk or network mount must not outlast the hook's budget).
 */
export async function callFailure(
  transcript: string,
  callId: string,
  withinMs: number,
  failureIn: (lines: string, callId: string) => string | null,
): Promise<TranscriptRead> {
  try {
    return { failure: failureIn(await withinTime(tail(transcript), withinMs), callId) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // No transcript (yet) is the ordinary "the transcript does not say".
    if (code === 'ENOENT') return { failure: null };
    const why = code ? `cannot be read (${code})` : (err as Error).message;
    return { failure: null, problem: `transcript ${JSON.stringify(transcript)} ${why}; the call's exit code was not read` };
  }
}
