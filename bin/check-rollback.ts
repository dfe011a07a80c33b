// `npm run check:rollback -- <git-rev>`: can this release be rolled back to <git-rev> and rolled forward again?
// On one data directory: this release's `npm start` runs a workload (sends, a scheduled one and attachments,
// webhooks whose retries are still pending, a recovery job, a received email) and is stopped; <git-rev>'s
// runtime (its own git worktree and npm install, cached) must serve everything through its API and make every
// pending retry and the scheduled send exactly once (a receiver counts), then leaves retries of its own pending;
// this release again must serve and finish all of it. Exit 0 when it holds, 1 when not (what failed is listed),
// 2 for a usage error. The last line is JSON: {"rev", "commit", "passed", "seconds", "phases": [...]}.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseStoredFormats, STORED_FORMATS } from '../lambdas/domain/stored-formats';
import { ApiClient } from './rollback/api-client';
import { CountingReceiver } from './rollback/receiver';
import {
  formatsUnreadableBy,
  prepareRelease,
  type Release,
  requireGit,
  resolveRevision,
  thisRelease,
} from './rollback/release';
import { type RunningRelease, startRelease } from './rollback/runtime-process';
import { type Clients, checkExactlyOnce, checkServed, noteDeliveries, noteRequestLog, settle } from './rollback/verify';
import {
  type Capabilities,
  capabilitiesOf,
  firstWorkload,
  type Ledger,
  laneEntries,
  laterWorkload,
  seedAccount,
} from './rollback/workload';

const USAGE = 'usage: npm run check:rollback -- <git-rev> [--keep]   (e.g. 5446728: the release before this one)';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Settings both releases run with. Retries 20 s apart: a first attempt that fails before the stop is retried
 * after it, by the next release (4 attempts, so a retry that fails again still has two left).
 */
const RUNTIME_ENV = {
  SF_RETRY_DELAYS: '20,20,20',
  SF_SIMULATOR_STEP_SECONDS: '1',
  SF_DOMAIN_VERIFY_SECONDS: '0',
  SF_RECONCILE_INTERVAL_SECONDS: '5',
  SF_RECONCILE_GRACE_SECONDS: '5',
  SF_SEED: 'false',
  POWERTOOLS_LOG_LEVEL: 'WARN',
};
/** Seconds after the workload's end the scheduled email is due: after the stop, early in the next release's run. */
const SCHEDULED_DUE_SECONDS = 15;
/** How long a release may take to finish what it was handed (retries 20 s apart, the scheduled send, the job). */
const SETTLE_MS = 150_000;
/** The same, once the release failed to read what it was handed: enough for the retries and the scheduled send. */
const SETTLE_AFTER_FAILURE_MS = 45_000;
/** The whole check's bound; past it the runtimes are killed and the check fails. */
const CHECK_TIMEOUT_MS = Number(process.env.SF_ROLLBACK_TIMEOUT_SECONDS ?? 600) * 1000;

interface PhaseReport {
  phase: string;
  release: string;
  commit: string;
  start_seconds: number;
  seconds: number;
  problems: string[];
  notes: string[];
  error_log_lines: number;
  /** Requests the receiver got while this release ran, and how many it answered 200 (the rest: flaky first tries). */
  webhook_requests: number;
  webhook_requests_answered_200: number;
}

const log = (line: string) => console.log(`check:rollback: ${line}`);
const running = new Set<RunningRelease>();

async function phase(
  name: string,
  release: Release,
  settings: Parameters<typeof startRelease>[1],
  logFile: string,
  receiver: CountingReceiver,
  body: (runtime: RunningRelease, report: PhaseReport) => Promise<void>,
): Promise<PhaseReport> {
  const started = Date.now();
  const receiptsBefore = receiver.receipts.length;
  const report: PhaseReport = {
    phase: name,
    release: release.label,
    commit: release.commit.slice(0, 12),
    start_seconds: 0,
    seconds: 0,
    problems: [],
    notes: [],
    error_log_lines: 0,
    webhook_requests: 0,
    webhook_requests_answered_200: 0,
  };
  log(`${name}: starting ${release.label} (${release.commit.slice(0, 12)})`);
  let runtime: RunningRelease | undefined;
  try {
    runtime = await startRelease(release, settings, logFile);
    running.add(runtime);
    report.start_seconds = runtime.startSeconds;
    await body(runtime, report);
  } catch (error) {
    report.problems.push((error as Error).message);
  } finally {
    if (runtime) {
      const code = await runtime.stop();
      running.delete(runtime);
      if (code !== 0) report.problems.push(`${release.label} exited ${code} on SIGTERM (log: ${logFile})`);
      const errors = runtime.errorLines();
      report.error_log_lines = errors.length;
      if (errors.length) report.notes.push(`${errors.length} ERROR log lines, first: ${errors[0]?.slice(0, 300)}`);
    }
    report.seconds = Math.round((Date.now() - started) / 100) / 10;
    const requests = receiver.receipts.slice(receiptsBefore);
    report.webhook_requests = requests.length;
    report.webhook_requests_answered_200 = requests.filter((r) => r.status === 200).length;
  }
  for (const problem of report.problems) log(`${name}: FAIL ${problem}`);
  for (const note of report.notes) log(`${name}: ${note}`);
  log(
    `${name}: ${report.problems.length ? 'failed' : 'passed'} in ${report.seconds} s ` +
      `(${report.webhook_requests} webhook requests, ${report.webhook_requests_answered_200} answered 200)`,
  );
  return report;
}

function clientsOf(runtime: RunningRelease, ledger: Ledger): Clients {
  const test = new ApiClient(runtime.url, ledger.testKey);
  return { test, live: test.withKey(ledger.liveKey) };
}

const capabilities = (release: Release): Capabilities =>
  capabilitiesOf(readFileSync(join(release.dir, 'lambdas', 'manifest.ts'), 'utf8'));

async function main(argv: readonly string[]): Promise<number> {
  const keep = argv.includes('--keep');
  const args = argv.filter((arg) => arg !== '--keep');
  if (args.length !== 1 || args[0]?.startsWith('-')) {
    console.error(USAGE);
    return 2;
  }
  const rev = args[0] as string;
  const began = Date.now();
  const deadline = setTimeout(() => {
    console.error(`check:rollback: FAIL the check took longer than ${CHECK_TIMEOUT_MS / 1000} s; stopping`);
    for (const runtime of running) void runtime.stop(1000);
    setTimeout(() => process.exit(1), 2000).unref();
  }, CHECK_TIMEOUT_MS);
  deadline.unref();

  log(requireGit());
  const current = thisRelease(root);
  const commit = resolveRevision(root, rev, log);
  // Expand/contract's rule, from the catalog alone: every format this release writes is read by <git-rev>.
  const formats = parseStoredFormats(process.env.SF_STORED_FORMATS);
  const unreadable = formatsUnreadableBy(root, rev, commit, formats, STORED_FORMATS);
  for (const problem of unreadable) log(`FAIL ${problem}`);
  const prepared = Date.now();
  const before = prepareRelease(root, rev, commit, log);
  const prepareSeconds = Math.round((Date.now() - prepared) / 100) / 10;
  log(`${rev} is ${commit.slice(0, 12)}, in ${before.dir} (dependencies: ${before.deps}; ${prepareSeconds} s)`);

  const work = mkdtempSync(join(tmpdir(), 'sendflow-rollback-run-'));
  mkdirSync(join(work, 'logs'));
  const settings = {
    dataDir: join(work, 'data'),
    stateFile: join(work, 'local-state.json'),
    env: {
      ...RUNTIME_ENV,
      ...(process.env.SF_STORED_FORMATS ? { SF_STORED_FORMATS: process.env.SF_STORED_FORMATS } : {}),
    },
  };
  const receiver = new CountingReceiver();
  await receiver.start();
  const ledger: Ledger = {
    accountId: '',
    testKey: '',
    liveKey: '',
    startedAt: new Date().toISOString(),
    webhooks: [],
    emails: [],
    received: null,
    recoveries: [],
    deliveries: {},
    requestLog: [],
  };
  const oldCaps = capabilities(before);
  const ourCaps = capabilities(current);
  const phases: PhaseReport[] = [];
  try {
    phases.push(
      await phase(
        '1 this release',
        current,
        settings,
        join(work, 'logs', '1-this.log'),
        receiver,
        async (runtime, report) => {
          Object.assign(ledger, await seedAccount(runtime.dynamoEndpoint));
          await firstWorkload(runtime, ledger, receiver, { dueInSeconds: SCHEDULED_DUE_SECONDS, log });
          const { total, pending } = await noteDeliveries(clientsOf(runtime, ledger), ledger);
          await noteRequestLog(clientsOf(runtime, ledger), ledger);
          const lanes = await laneEntries(runtime.dynamoEndpoint);
          report.notes.push(
            `left ${total} deliveries, ${pending} with a retry pending; ordering lanes hold ${lanes.maps} ` +
              `{s, by} entries and ${lanes.bare} bare ones; the scheduled email is due ${SCHEDULED_DUE_SECONDS} s on`,
          );
          if (pending === 0)
            report.problems.push('no retry was pending at the stop: the check proved nothing about them');
          const scheduled = ledger.emails.find((e) => e.scheduled);
          const status =
            scheduled && (await clientsOf(runtime, ledger).test.get(`/emails/${scheduled.id}`)).body.status;
          if (status !== 'scheduled') report.problems.push(`the scheduled email was ${status} before the stop`);
        },
      ),
    );
    if (phases[0]?.problems.length === 0) {
      phases.push(
        await phase(
          `2 ${rev}`,
          before,
          settings,
          join(work, 'logs', '2-before.log'),
          receiver,
          async (runtime, report) => {
            const clients = clientsOf(runtime, ledger);
            report.problems.push(...(await checkServed(clients, ledger, oldCaps)));
            const pendingBefore = Object.values(ledger.deliveries)
              .flatMap((rows) => Object.values(rows))
              .filter((row) => row.status === 'pending').length;
            // A release that already failed to serve what it was handed gets less time to show what it still does.
            const settleMs = report.problems.length ? SETTLE_AFTER_FAILURE_MS : SETTLE_MS;
            await settle(clients, ledger, receiver, oldCaps, settleMs, (line) => log(`2 ${rev}: ${line}`));
            report.problems.push(...(await checkExactlyOnce(clients, ledger, receiver)));
            report.notes.push(
              `served ${ledger.emails.length} emails, ${ledger.webhooks.length} webhooks and their deliveries` +
                `${oldCaps.attachments ? ', attachments' : ''}${oldCaps.receiving ? ', the received email' : ''}; ` +
                `made the ${pendingBefore} pending retries and the scheduled send, each exactly once`,
            );
            await laterWorkload(runtime, ledger, receiver);
            const { pending } = await noteDeliveries(clients, ledger);
            report.notes.push(`left ${pending} retries pending for this release`);
          },
        ),
      );
      phases.push(
        await phase(
          '3 this release again',
          current,
          settings,
          join(work, 'logs', '3-this.log'),
          receiver,
          async (runtime, report) => {
            const clients = clientsOf(runtime, ledger);
            report.problems.push(...(await checkServed(clients, ledger, ourCaps)));
            await settle(clients, ledger, receiver, ourCaps, SETTLE_MS, (line) => log(`3 this release again: ${line}`));
            report.problems.push(...(await checkExactlyOnce(clients, ledger, receiver)));
            report.notes.push(
              'served everything both releases wrote; every delivery and send ended, each exactly once',
            );
          },
        ),
      );
    }
  } finally {
    await receiver.stop();
  }
  const passed = unreadable.length === 0 && phases.length === 3 && phases.every((p) => p.problems.length === 0);
  const seconds = Math.round((Date.now() - began) / 100) / 10;
  writeFileSync(join(work, 'ledger.json'), JSON.stringify({ ledger, receipts: receiver.receipts }, null, 2));
  if (passed && !keep) rmSync(work, { recursive: true, force: true });
  else log(`logs, ledger and data directory kept in ${work}`);
  log(
    passed
      ? `PASSED: this release rolls back to ${rev} and forward again (${seconds} s)`
      : `FAILED: this release cannot be rolled back to ${rev} safely (${seconds} s)`,
  );
  console.log(
    JSON.stringify({
      rev,
      commit,
      passed,
      seconds,
      prepare_seconds: prepareSeconds,
      dependencies: before.deps,
      stored_formats: {
        written: Object.keys(formats).filter((name) => formats[name as keyof typeof formats]),
        unreadable,
      },
      phases,
    }),
  );
  return passed ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`check:rollback: ${error instanceof Error ? error.message : String(error)}`);
    for (const runtime of running) void runtime.stop(1000);
    setTimeout(() => process.exit(1), 1500).unref();
  },
);
