// `npm start`: the local runtime on PORT (default 3000), data under SF_DATA_DIR (default .data).
// Prints where it listens, and a full-access test key on the first start of an empty store; then, on a terminal,
// one short line per request and per webhook attempt (JSON lines into a pipe or a file, or with SF_LOG_FORMAT).
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { createSignInLink } from '../lambdas/app/dashboard/sign-in';
import { ConfigError, loadConfig, localTableDefaults } from '../lambdas/runtime/config';
import { consoleColors, logFormatFor } from '../lambdas/runtime/local/console-lines';
import { DataDirError } from '../lambdas/runtime/local/dynalite';
import { startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { localStateFile, runningLocalRuntime, writeLocalState } from './local-state';

async function main(): Promise<void> {
  const loaded = loadConfig(process.env, localTableDefaults());
  const stateFile = localStateFile();
  // A Sendflow that still announces itself on this data directory is running, not stopping (a stop removes the
  // file first): its lock will not come free, so there is nothing to wait for.
  const running = runningLocalRuntime(stateFile);
  const taken = running !== undefined && resolve(running.dataDir) === resolve(loaded.dataDir);
  const config = taken ? { ...loaded, dataDirWaitSeconds: 0 } : loaded;
  const tty = process.stdout.isTTY === true;
  const pretty = logFormatFor(config.logFormat, tty) === 'pretty';
  const runtime = await startLocalRuntime(config, {
    ...(pretty ? { consoleLines: { color: consoleColors(process.env, tty) } } : {}),
    // A Sendflow stopped a moment ago (Ctrl-C returns the prompt while it drains) still holds the directory.
    onDataDirWait: () =>
      console.log(
        `Waiting for the previous Sendflow on this data directory (${config.dataDir}) to stop, up to ${config.dataDirWaitSeconds} s…`,
      ),
    // As a crash would: a runtime whose storage is gone should not keep answering 500s.
    onDynamoFailure: (error) => {
      console.error(`sendflow: ${error.message}`);
      process.exit(1);
    },
  });
  writeLocalState(stateFile, {
    pid: process.pid,
    url: runtime.url,
    dynamoEndpoint: runtime.dynamoEndpoint,
    dataDir: config.dataDir,
    adminToken: runtime.adminToken,
  });

  console.log(`Sendflow is listening on ${runtime.url}`);
  console.log(`Inbound SMTP on ${config.host.includes(':') ? `[${config.host}]` : config.host}:${runtime.smtpPort}`);
  console.log(
    `Data: ${config.dataDir === ':memory:' ? 'in memory (lost on exit)' : config.dataDir}; DynamoDB endpoint ${runtime.dynamoEndpoint}`,
  );
  if (runtime.seeded) {
    console.log(`Created the default account ${runtime.seeded.accountId} (plan free) and a full-access test key.`);
    console.log('It is shown once; keep it:');
    console.log(`  ${runtime.seeded.apiKey}`);
  }
  // A fresh one-time link on every start (15 minutes, works once), in the mode of the default key.
  if (runtime.defaultAccountId) {
    const link = await createSignInLink(runtime.services, {
      accountId: runtime.defaultAccountId,
      mode: 'test',
      baseUrl: runtime.url,
    });
    console.log(`Dashboard (one-time sign-in link, valid 15 minutes): ${link.url}`);
  } else {
    console.log('Dashboard: npm run admin -- dashboard-link --account <id> prints a sign-in link.');
  }
  if (pretty) console.log('Requests and webhook attempts follow, one line each (SF_LOG_FORMAT=json: JSON lines).\n');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    // Whatever is unfinished is journaled: never let a stuck close keep the process past 10 s.
    setTimeout(() => process.exit(0), 9_000).unref();
    rmSync(stateFile, { force: true });
    await runtime.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(`sendflow: ${describe(error)}`);
  process.exit(1);
});

function describe(error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  if (error instanceof DataDirError) return error.message;
  const err = error as NodeJS.ErrnoException;
  if (err.code === 'EADDRINUSE')
    return `port ${process.env.PORT ?? 3000} is already in use: set PORT to another port, or PORT=0 for any free port.`;
  if (err.code === 'EACCES' && 'port' in err) return `no permission to listen on port ${process.env.PORT}.`;
  return rootMessage(err);
}

function rootMessage(error: Error): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
