/**
 * `git ckpt mcp`: the agent tools (agent-tools.ts) served over the Model
 * Context Protocol on stdin/stdout, with the official SDK. The server holds no
 * lock and no state between calls: each call opens the workspace, reads the
 * ledger afresh and goes through the lock door, so hooks and the CLI work
 * alongside it. A bad call is a tool error with one sentence (`isError`), never
 * a crash; stdout carries the protocol and nothing else.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AGENT_INSTRUCTIONS, AGENT_TOOLS, ARGUMENTS_MAX_BYTES, type AgentTool } from './agent-tools.js';
import { asCkptError } from '../model/errors.js';
import { Workspace } from '../workspace.js';

export interface McpOptions {
  /** The workspace named by -C; otherwise the client's first root, else `cwd`. */
  dir?: string;
  cwd: string;
  version: string;
  env?: NodeJS.ProcessEnv;
  /** Where a diagnostic line goes (stderr): never stdout, which is the protocol's. */
  log(line: string): void;
}

/** Pure: the workspace folder of a client's roots (the first file: URI), if any. @public (tests use it) */
export function rootFolder(roots: { uri: string }[]): string | undefined {
  for (const root of roots) {
    if (!root.uri.startsWith('file:')) continue;
    try {
      return fileURLToPath(root.uri);
    } catch {
      /* not a local path: try the next */
    }
  }
  return undefined;
}

/** Every result's first field: the text a person or a model reads. */
const summary = z.string().describe('the result in words, as a person would read it');

/** How long the first call waits for the client to say its roots. */
const ROOTS_WAIT_MS = 5000;

function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** Serve the tools on stdin/stdout until the client closes the stream. */
export async function serveMcp(options: McpOptions): Promise<void> {
  const server = new McpServer({ name: 'git-ckpt', version: options.version }, { instructions: AGENT_INSTRUCTIONS });
  let workspaceDir = options.dir ? path.resolve(options.cwd, options.dir) : undefined;

  // Without -C, the client's roots name the workspace (Claude Code, Codex and Gemini start servers in the project too).
  // Calls wait for the answer, so that none acts on the wrong folder.
  let rootsKnown: Promise<void> = Promise.resolve();
  server.server.oninitialized = () => {
    if (workspaceDir || !server.server.getClientCapabilities()?.roots) return;
    rootsKnown = server.server
      .listRoots(undefined, { timeout: ROOTS_WAIT_MS })
      .then(({ roots }) => {
        workspaceDir ??= rootFolder(roots);
      })
      .catch((err: unknown) => options.log(`roots not available (${(err as Error).message}); serving ${options.cwd}`));
  };

  const register = (tool: AgentTool) =>
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: { summary, ...tool.output },
        annotations: tool.annotations,
      },
      async (args: Record<string, unknown>): Promise<CallToolResult> => {
        if (Buffer.byteLength(JSON.stringify(args ?? {})) > ARGUMENTS_MAX_BYTES)
          return errorResult(`refused: the arguments are larger than ${ARGUMENTS_MAX_BYTES / 1024} KiB`);
        try {
          await rootsKnown;
          const ws = Workspace.open(workspaceDir ?? options.cwd, { env: options.env });
          const result = await tool.run(ws, args as never);
          // Clients that pass the model the structured content alone (Claude Code does) still give it the readable text.
          return { content: [{ type: 'text', text: result.text }], structuredContent: { summary: result.text, ...result.structured } };
        } catch (caught) {
          const err = asCkptError(caught);
          if (err.code === 'internal')
            options.log(`internal error in ${tool.name}: ${(err.cause as Error | undefined)?.stack ?? err.message}`);
          return errorResult(err.code === 'internal' ? `internal error in git-ckpt: ${err.message}` : err.message);
        }
      },
    );
  for (const tool of AGENT_TOOLS) register(tool);

  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  await server.connect(transport);
  // The client closing our stdin ends the session once every request it sent is answered: a client
  // that writes its requests and closes at once (`printf … | git ckpt mcp`) still gets every reply.
  let unanswered = 0;
  let inputEnded = false;
  const closeWhenAnswered = () => {
    if (inputEnded && unanswered === 0) void transport.close();
  };
  const receive = transport.onmessage;
  transport.onmessage = (message) => {
    if ('method' in message && 'id' in message) unanswered++;
    receive?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    await send(message);
    if (!('method' in message) && 'id' in message) {
      unanswered = Math.max(0, unanswered - 1);
      closeWhenAnswered();
    }
  };
  process.stdin.once('end', () => {
    inputEnded = true;
    closeWhenAnswered();
  });
  await closed;
}
