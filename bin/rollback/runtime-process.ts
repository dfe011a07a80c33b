// check:rollback's runtimes: a release's `npm start` (bin/local.ts run from its checkout, as a person would run
// it) as a child process on a shared data directory, free ports, its output kept in a log file. Started, read
// from its banner, and stopped with SIGTERM as Ctrl-C stops it (journals and claims left as a real stop leaves them).
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import type { Release } from './release';

export interface RunningRelease {
  readonly release: Release;
  /** The API's base URL, stage included (http://127.0.0.1:PORT/v1). */
  readonly url: string;
  /** The inbound SMTP server's port; absent in releases without one. */
  readonly smtpPort?: number;
  /** The embedded DynamoDB's loopback endpoint. */
  readonly dynamoEndpoint: string;
  readonly logFile: string;
  /** Seconds from spawn to the banner. */
  readonly startSeconds: number;
  /** Stops it as Ctrl-C does; resolves with its exit code (it is killed if it outlives `timeoutMs`). */
  stop(timeoutMs?: number): Promise<number | null>;
  /** Lines its log holds at ERROR level (JSON log lines, or a crash's output). */
  errorLines(): string[];
}

/** Settings every runtime of a check runs with: both releases see the same retry schedule and clocks. */
export interface RuntimeSettings {
  readonly dataDir: string;
  readonly stateFile: string;
  readonly env: Readonly<Record<string, string>>;
}

const BANNER_TIMEOUT_MS = 90_000;

/** Runs `release`'s bin/local.ts from its checkout until it prints where it listens. */
export async function startRelease(
  release: Release,
  settings: RuntimeSettings,
  logFile: string,
): Promise<RunningRelease> {
  const started = Date.now();
  const env: Record<string, string> = {};
  // The caller's environment, minus whatever configures Sendflow: both releases get exactly the settings below.
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('SF_') && name !== 'PORT') env[name] = value;
  }
  Object.assign(env, settings.env, {
    PORT: '0',
    SF_SMTP_PORT: '0',
    SF_DATA_DIR: settings.dataDir,
    SF_LOCAL_STATE_FILE: settings.stateFile,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  });
  const log = createWriteStream(logFile);
  log.write(`--- ${release.label} (${release.commit.slice(0, 12)}) from ${release.dir}\n`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    cwd: release.dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  let output = '';
  const banner = await new Promise<{ url: string; smtpPort?: number; dynamoEndpoint: string }>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`${release.label} printed no banner within 90 s`)),
      BANNER_TIMEOUT_MS,
    );
    const read = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const url = /Sendflow is listening on (\S+)/.exec(output)?.[1];
      const dynamoEndpoint = /DynamoDB endpoint (\S+)/.exec(output)?.[1];
      if (!url || !dynamoEndpoint) return;
      clearTimeout(timer);
      child.stdout.off('data', read);
      const smtp = /Inbound SMTP on \S+:(\d+)/.exec(output)?.[1];
      done({ url, dynamoEndpoint, ...(smtp ? { smtpPort: Number(smtp) } : {}) });
    };
    child.stdout.on('data', read);
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`${release.label} exited (${code}) before it listened; its output is in ${logFile}`));
    });
  }).catch(async (error: unknown) => {
    child.kill('SIGKILL');
    await exited;
    throw error;
  });
  return {
    release,
    ...banner,
    logFile,
    startSeconds: (Date.now() - started) / 1000,
    stop: (timeoutMs = 15_000) => stopChild(child, exited, timeoutMs).finally(() => log.end()),
    errorLines: () => errorLinesOf(readFileSync(logFile, 'utf8')),
  };
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>, timeoutMs: number) {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** The log's lines at ERROR (JSON log lines), and what a crash or a refused start prints. */
function errorLinesOf(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => /"level":"(ERROR|CRITICAL)"/.test(line) || /^\s*(Error|TypeError|sendflow:)/.test(line));
}
