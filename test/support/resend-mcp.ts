// Resend's own MCP server (the resend-mcp package, unmodified) over stdio, pointed at a local runtime the way a
// user configures it: RESEND_API_KEY is a Sendflow key, RESEND_BASE_URL the runtime's /v1 (the resend SDK inside
// it reads that variable). The MCP client SDK spawns and drives it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { TestRuntime } from './runtime';

const require = createRequire(import.meta.url);

/** resend-mcp needs Node 22 or later: this process's Node if it is, else the one the `node` devDependency ships. */
function node22(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  return join(require.resolve('node/package.json'), '..', 'bin', 'node');
}

/** The `resend-mcp` command: the package's bin (what `npx resend-mcp` runs). */
function resendMcpBin(): string {
  // Its exports map hides package.json; its main is dist/server.js, so the package root is two levels up.
  const root = dirname(dirname(require.resolve('resend-mcp')));
  const { bin } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  return join(root, bin['resend-mcp'] as string);
}

export interface ToolAnswer {
  readonly isError: boolean;
  /** Every text part, joined by newlines. */
  readonly text: string;
}

export interface ResendMcp {
  readonly client: Client;
  call(tool: string, args?: Record<string, unknown>): Promise<ToolAnswer>;
  /** What the server wrote to stderr (its start-up line, and anything it failed on). */
  stderr(): string;
  close(): Promise<void>;
}

export async function startResendMcp(rt: Pick<TestRuntime, 'url'>, key: string): Promise<ResendMcp> {
  // An empty working directory: resend-mcp loads a .env from it (dotenv), and none must leak in.
  const cwd = mkdtempSync(join(tmpdir(), 'resend-mcp-'));
  const transport = new StdioClientTransport({
    command: node22(),
    args: [resendMcpBin()],
    env: {
      RESEND_API_KEY: key,
      RESEND_BASE_URL: rt.url,
      // Only the editor tools fetch the dashboard; an unreachable loopback port keeps them off the network.
      RESEND_DASHBOARD_URL: 'http://127.0.0.1:9',
      PATH: process.env.PATH ?? '',
    },
    cwd,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'sendflow-test', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    async call(tool, args = {}) {
      const result = (await client.callTool({ name: tool, arguments: args })) as {
        isError?: boolean;
        content?: { type: string; text?: string }[];
      };
      const text = (result.content ?? [])
        .filter((part) => part.type === 'text')
        .map((part) => part.text ?? '')
        .join('\n');
      return { isError: result.isError === true, text };
    },
    stderr: () => stderr,
    async close() {
      await client.close();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}
