// The doc-test: every shell command of the README and the guides in docs/ runs as written against one local
// Sendflow (`npm start`'s entry point, started once). Each guide runs top to bottom in its own shell state, as a
// reader working through it would: `export NAME=prefix_…` pastes the value printed above (test/support/doc-blocks.ts
// says how blocks are marked). What the doc-test changes, and only this: the guides' default ports (3000 for the
// API, 2525 for SMTP, 4000 and 4102 for the receiver) become free ones, curl fails on an HTTP error
// (--fail-with-body), and a local domain verifies after 1 s instead of SF_DOMAIN_VERIFY_SECONDS' default.
// Blocks marked aws, bench, setup and incident are not run; the test lists them.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forbidden, pasteCopied, type ShellBlock, segments, shellBlocks } from '../support/doc-blocks';
import { type Spawned, spawnScript } from '../support/process';

const root = join(import.meta.dirname, '..', '..');
const guides = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join(root, 'docs', name)),
];
// In the order a reader meets them: Templates makes the template Sending sends with; local-runtime.md revokes the
// key npm start printed (as a reader who lost it does), so it runs last.
const ORDER = ['README.md', 'domains-and-contacts.md', 'templates.md', 'sending.md', 'webhooks.md', 'inbound.md'];
const rank = (file: string) =>
  file.endsWith('local-runtime.md') ? 99 : ORDER.findIndex((name) => file.endsWith(`/${name}`) || file === name);
guides.sort((a, b) => (rank(a) < 0 ? 50 : rank(a)) - (rank(b) < 0 ? 50 : rank(b)));
const blocks = guides.flatMap((file) => shellBlocks(relative(root, file), readFileSync(file, 'utf8')));

/** A port free right now (the service and the receiver take theirs later; a clash would fail loudly). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let service: Spawned;
let banner = '';
let work = '';
const ports = { api: 0, smtp: 0, other: 0 };
let env: Record<string, string> = {};

beforeAll(async () => {
  mkdirSync(join(root, '.sendflow'), { recursive: true, mode: 0o700 });
  work = mkdtempSync(join(root, '.sendflow', 'doc-test-'));
  [ports.api, ports.smtp, ports.other] = await Promise.all([freePort(), freePort(), freePort()]);
  const state = {
    SF_DATA_DIR: join(work, 'data'),
    SF_LOCAL_STATE_FILE: join(work, 'local.json'),
  };
  service = spawnScript('bin/local.ts', [], {
    ...state,
    PORT: String(ports.api),
    SF_SMTP_PORT: String(ports.smtp),
    SF_DOMAIN_VERIFY_SECONDS: '1',
    SF_LOG_FORMAT: 'json',
  });
  await service.waitFor(/Dashboard \(one-time sign-in link/, 60_000);
  banner = service.output();
  env = { ...state, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
}, 90_000);

afterAll(async () => {
  service?.child.kill('SIGTERM');
  await service?.exited();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The guide's text with its default ports made this run's (each guide its own receiver port). */
function localized(text: string, receiver: number): string {
  return text
    .replaceAll('127.0.0.1:3000', `127.0.0.1:${ports.api}`)
    .replaceAll('127.0.0.1:2525', `127.0.0.1:${ports.smtp}`)
    .replace(/--server 127\.0\.0\.1:\d+/g, `--server 127.0.0.1:${ports.smtp}`)
    .replaceAll('127.0.0.1:4000', `127.0.0.1:${receiver}`)
    .replaceAll('4102', String(ports.other));
}

/**
 * What every block starts with: the guide's variables so far, and curl failing on an HTTP error. The guides run
 * side by side on one account, whose plan allows 10 requests a second: curl retries a 429 after its Retry-After,
 * as a reader pressing Enter again would (a refused request changed nothing). Enough times for every guide's
 * burst at once: the guides together make more than 10 requests in some seconds.
 */
const PRELUDE = `curl() { command curl --fail-with-body --retry 30 --retry-max-time 60 "$@"; }
[ -f "$SF_DOC_STATE" ] && . "$SF_DOC_STATE"
set -eo pipefail
`;
const SAVE = `\nexport -p | grep -E '^declare -x [A-Z_][A-Z0-9_]*=' > "$SF_DOC_STATE.next"; mv "$SF_DOC_STATE.next" "$SF_DOC_STATE"\n`;

function bash(script: string, extra: Record<string, string>): ChildProcess {
  return spawn('bash', ['--noprofile', '--norc', '-c', script], {
    cwd: work,
    env: { ...process.env, ...env, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
}

function run(script: string, extra: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = bash(script, extra);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/** Runs one guide's blocks in order; resolves with the failures (empty when every block ran). */
async function runGuide(file: string): Promise<string[]> {
  const receiver = await freePort();
  const own = { SF_RECEIVER_PORT: String(receiver) };
  const stateFile = join(work, `${file.replace(/[^A-Za-z0-9]/g, '_')}.env`);
  let printed = banner;
  const servers: ChildProcess[] = [];
  const failures: string[] = [];
  try {
    for (const block of blocks.filter((b) => b.file === file && (b.kind === 'run' || b.kind === 'server'))) {
      const refused = forbidden(block.text);
      if (refused) {
        failures.push(`${file}:${block.line}: "${refused}" is never run by the doc-test: mark the block setup or aws`);
        break;
      }
      if (block.kind === 'server') {
        const { script, problems } = pasteCopied(localized(block.text, receiver), printed);
        if (problems.length) {
          failures.push(`${file}:${block.line}: ${problems.join('; ')}`);
          break;
        }
        // The last command is the one left running; the lines before it (its variables) run first.
        const lines = script.split('\n');
        const last = lines.findLastIndex((line) => line.trim() !== '' && !line.trim().startsWith('#'));
        const before = await run(`${PRELUDE}${lines.slice(0, last).join('\n')}${SAVE}`, {
          ...own,
          SF_DOC_STATE: stateFile,
        });
        if (before.code !== 0) {
          failures.push(`${file}:${block.line}: exit ${before.code}\n${before.output.slice(-2000)}`);
          break;
        }
        const child = bash(`${PRELUDE}${lines[last]}`, { ...own, SF_DOC_STATE: stateFile });
        servers.push(child);
        let output = '';
        const collect = (d: Buffer) => {
          output += d.toString();
        };
        child.stdout?.on('data', collect);
        child.stderr?.on('data', collect);
        // Started: it printed its first line (the receiver where it listens, listen its secret).
        const started = Date.now();
        while (!/\n/.test(output) && child.exitCode === null && Date.now() - started < 30_000) {
          await new Promise((r) => setTimeout(r, 50));
        }
        if (child.exitCode !== null) {
          failures.push(`${file}:${block.line}: ${lines[last]} exited ${child.exitCode}\n${output.slice(-2000)}`);
          break;
        }
        printed += output;
        continue;
      }
      for (const segment of segments(localized(block.text, receiver))) {
        const pasted = pasteCopied(segment, printed);
        if (pasted.problems.length) {
          failures.push(`${file}:${block.line}: ${pasted.problems.join('; ')}\n--- printed:\n${printed.slice(-600)}`);
          break;
        }
        const { code, output } = await run(`${PRELUDE}${pasted.script}${SAVE}`, { ...own, SF_DOC_STATE: stateFile });
        printed += `\n${output}`;
        if (code !== 0) {
          failures.push(`${file}:${block.line}: exit ${code}\n${pasted.script}\n--- printed:\n${output.slice(-2000)}`);
          break;
        }
      }
      if (failures.length) break;
    }
  } finally {
    for (const child of servers) {
      if (child.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGTERM');
    }
  }
  return failures;
}

describe('the guides, run as written', () => {
  it('marks every block it does not run, and every bench block names a benchmark that exists', () => {
    const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: object }).scripts;
    const skipped = blocks.filter((b) => b.kind !== 'run' && b.kind !== 'server');
    for (const block of skipped.filter((b) => b.kind === 'bench')) {
      for (const [, name] of block.text.matchAll(/npm run (bench:[a-z-]+)/g)) {
        expect(Object.keys(scripts), `${block.file}:${block.line}`).toContain(name);
      }
      for (const [, path] of block.text.matchAll(/node --import tsx (bench\/[a-z-]+\.ts)/g)) {
        expect(readdirSync(join(root, 'bench')), `${block.file}:${block.line}`).toContain(path?.slice(6));
      }
    }
    // The list, for whoever reads the test's output: what runs only on AWS, benchmarks, set-up.
    console.log(
      `doc-test: ${blocks.filter((b) => b.kind === 'run').length} blocks run, ${blocks.filter((b) => b.kind === 'server').length} started; not run:\n${skipped
        .map((b: ShellBlock) => `  ${b.kind.padEnd(8)} ${b.file}:${b.line}`)
        .join('\n')}`,
    );
    expect(blocks.filter((b) => b.kind === 'run').length).toBeGreaterThan(20);
    const unmarked = blocks.filter((b) => (b.kind === 'run' || b.kind === 'server') && forbidden(b.text));
    expect(unmarked.map((b) => `${b.file}:${b.line}: ${forbidden(b.text)}`)).toEqual([]);
  });

  it('runs every command of every guide against one local Sendflow', { timeout: 240_000 }, async () => {
    // SF_DOC_ONLY=docs/inbound.md runs one guide (while writing it).
    const files = [...new Set(blocks.filter((b) => b.kind === 'run').map((b) => b.file))].filter(
      (file) => !process.env.SF_DOC_ONLY || file === process.env.SF_DOC_ONLY,
    );
    // Side by side, except where one guide needs another: Sending sends Templates' template, and
    // local-runtime.md revokes the printed key the others use, so it runs after them all.
    const after: Readonly<Record<string, string>> = { 'docs/sending.md': 'docs/templates.md' };
    const last = files.filter((file) => file.endsWith('local-runtime.md'));
    const runs = new Map<string, Promise<string[]>>();
    const start = (file: string): Promise<string[]> => {
      const before = after[file];
      const run =
        before && files.includes(before)
          ? (runs.get(before) ?? start(before)).then(async (earlier) =>
              earlier.length ? [`${file}: not run, ${before} failed`] : runGuide(file),
            )
          : runGuide(file);
      runs.set(file, run);
      return run;
    };
    for (const file of files.filter((f) => !last.includes(f))) if (!runs.has(file)) start(file);
    const failures = (await Promise.all(runs.values())).flat();
    for (const file of last) failures.push(...(await runGuide(file)));
    expect(failures).toEqual([]);
  });
});
