// `npm run bench:inbound-hostile`: can one hostile inbound message freeze the local runtime for other tenants?
// The runtime runs as `npm start` does (its own process, data on disk in a temp directory); tenant B (live key,
// a verified receiving domain) is probed open-loop: GET /v1/webhooks every PROBE_MS whatever the answers, each
// timed from when it was due, so a stalled event loop shows as the queue of late answers it really causes. B is
// measured alone, then while A sends B's domain, over SMTP, a message of 16k, 32k and 900k MIME parts (one
// phase each, the runtime restarted and its spool emptied between phases so no phase inherits another's work),
// then once more while a restarted runtime hands over the three messages from its spool (the path of a message
// that got in: SES on AWS, or a spool an older release left), beside B alone right after a start. The attacker
// sends from a thread of its own, so its work never delays the probes. Prints B's p50/p99/max per phase.
// Goal: B's p99 ≤ 250 ms throughout. Bounded: each phase lasts BENCH_WINDOW_MS (default 15000); a probe still
// unanswered GRACE_MS after its phase counts with the time it waited (shown as ≥, and as unanswered).
// Env: BENCH_WINDOW_MS, BENCH_PARTS (default 16000,32000,900000).
import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DiskSpool } from '../lambdas/adapters/local/inbound-spool';
import { makeReceivingDomain, sendHostileMessage } from './hostile-mail';
import { percentile, positiveInt, printTable } from './report';

const root = fileURLToPath(new URL('..', import.meta.url));
const WINDOW_MS = positiveInt('BENCH_WINDOW_MS', 15_000);
const PARTS = (process.env.BENCH_PARTS ?? '16000,32000,900000').split(',').map((n) => {
  const parts = Number(n);
  if (!Number.isInteger(parts) || parts <= 0) throw new Error(`BENCH_PARTS: ${n} is not a positive whole number`);
  return parts;
});
// 20 a second: within what B's 4 request slots (LOCAL_ACCOUNT_CONCURRENCY) serve even on a loaded machine, so
// the probes measure the runtime, not a queue of their own making.
const PROBE_MS = 50;
const GRACE_MS = 5_000;
const GOAL_MS = 250;
const DOMAIN = 'victim.bench.example';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Runtime {
  readonly url: string;
  readonly smtpPort: number;
  stop(): Promise<void>;
}

interface Phase {
  readonly name: string;
  readonly latencies: number[];
  readonly unanswered: number;
  readonly note: string;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sendflow-bench-hostile-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    SF_SMTP_PORT: '0',
    SF_DATA_DIR: dataDir,
    SF_SEED: 'false',
    SF_DOMAIN_VERIFY_SECONDS: '0',
    SF_LOCAL_STATE_FILE: join(dataDir, 'local.json'),
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  };
  const phases: Phase[] = [];
  // Each phase is printed as it ends too: a run cut short still shows what it measured.
  const push = (phase: Phase) => {
    phases.push(phase);
    console.log(
      `${phase.name}: ${phase.latencies.length} probes, p99 ${percentile(phase.latencies, 99).toFixed(0)} ms; ${phase.note}`,
    );
  };
  let runtime = await startRuntime(env);
  try {
    // Two tenants: A, the attacker (it needs no more than an SMTP client), and B, the victim, which receives.
    admin(env, ['create-account', '--plan', 'scale']);
    const b = admin(env, ['create-account', '--plan', 'scale']).account_id as string;
    const keyB = admin(env, ['create-key', '--account', b, '--mode', 'live']).key as string;
    await makeReceivingDomain(
      (path, init) =>
        fetch(`${runtime.url}${path}`, {
          ...init,
          headers: { Authorization: `Bearer ${keyB}`, 'Content-Type': 'application/json' },
        }),
      DOMAIN,
    );

    push({ name: 'B alone', ...(await probe(runtime.url, keyB, async () => 'no attack')) });
    for (const parts of PARTS) {
      const bytes = hostileMessage(parts).length;
      const name = `${parts.toLocaleString('en')} parts (${(bytes / 1024).toFixed(0)} KB) over SMTP`;
      push({ name, ...(await probe(runtime.url, keyB, () => sendHostileMessage(runtime.smtpPort, parts, DOMAIN))) });
      // The next phase starts clean: whatever this message left running or spooled goes with the process.
      await runtime.stop();
      emptySpool(dataDir);
      runtime = await startRuntime(env);
    }

    // A start's own cost, for the phase below: B probed from a restart with nothing spooled.
    push({ name: 'B alone, right after a start', ...(await probe(runtime.url, keyB, async () => 'no attack')) });

    // The path of a message that got in (SES accepts before the function runs; an older release's spool): the
    // runtime is stopped, the messages written to its spool, and B probed from the restart on.
    await runtime.stop();
    const spool = new DiskSpool(join(dataDir, 'inbound-spool'));
    for (const parts of PARTS) {
      const writer = spool.begin({
        mailFrom: 'a@attacker.example',
        recipients: [`inbox@${DOMAIN}`],
        receivedAt: new Date().toISOString(),
      });
      writer.write(hostileMessage(parts));
      writer.commit();
    }
    runtime = await startRuntime(env);
    push({
      name: `${PARTS.map((p) => `${p / 1000}k`).join(' + ')} handed over from the spool at start`,
      ...(await probe(
        runtime.url,
        keyB,
        async () => {
          const left = readdirSync(join(dataDir, 'inbound-spool')).filter((f) => f.endsWith('.msg')).length;
          const stored = await fetch(`${runtime.url}/emails/receiving?limit=10`, {
            headers: { Authorization: `Bearer ${keyB}` },
            signal: AbortSignal.timeout(GRACE_MS),
          }).then(
            async (res) =>
              res.ok ? String(((await res.json()) as { data: unknown[] }).data.length) : `HTTP ${res.status}`,
            () => 'no answer',
          );
          return `B's received list: ${stored}; ${left} left in the spool at the window's end`;
        },
        true,
      )),
    });
  } finally {
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  console.log(
    `\nB's API (GET /v1/webhooks, open loop every ${PROBE_MS} ms), ${WINDOW_MS / 1000} s per phase; goal p99 ≤ ${GOAL_MS} ms\n`,
  );
  printPhases(phases);
}

function printPhases(phases: readonly Phase[]): void {
  const fmt = (ms: number) => (Number.isFinite(ms) ? ms.toFixed(0) : '-');
  printTable(
    ['phase', 'probes', 'unanswered', 'p50 ms', 'p99 ms', 'max ms', 'p99 ≤ 250', 'what happened'],
    phases.map((p) => {
      const atLeast = p.unanswered ? '≥ ' : '';
      const p99 = percentile(p.latencies, 99);
      return [
        p.name,
        String(p.latencies.length),
        String(p.unanswered),
        fmt(percentile(p.latencies, 50)),
        `${atLeast}${fmt(p99)}`,
        `${atLeast}${fmt(Math.max(...p.latencies))}`,
        p99 <= GOAL_MS && !p.unanswered ? 'yes' : 'NO',
        p.note,
      ];
    }),
  );
}

/**
 * B's probes over one window while `attack` runs (its result is the phase's note). `noteAtEnd`: the note is
 * taken when the window ends (the attack is then a report, not an action).
 */
async function probe(
  url: string,
  key: string,
  attack: () => Promise<string>,
  noteAtEnd = false,
): Promise<Omit<Phase, 'name'>> {
  const latencies: number[] = [];
  const pending = new Set<number>();
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  let n = 0;
  const timer = setInterval(() => {
    // Open loop: every probe due by now is sent, however late the timer fires (a frozen process catches up).
    while (start + n * PROBE_MS <= performance.now() && n * PROBE_MS < WINDOW_MS) {
      const due = start + n * PROBE_MS;
      const id = n++;
      pending.add(id);
      inFlight.push(
        fetch(`${url}/webhooks`, { headers: { Authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(120_000) })
          .then(async (res) => {
            await res.arrayBuffer();
            if (res.status !== 200) throw new Error(`B's probe: HTTP ${res.status}`);
            if (pending.delete(id)) latencies.push(performance.now() - due);
          })
          .catch(() => {
            // Counted below as unanswered, with the time it waited.
          }),
      );
    }
  }, PROBE_MS / 2);
  const note = noteAtEnd ? undefined : attack().catch((error: Error) => `attack failed: ${error.message}`);
  await sleep(WINDOW_MS);
  clearInterval(timer);
  await Promise.race([Promise.all(inFlight), sleep(GRACE_MS)]);
  const end = performance.now();
  for (const id of pending) latencies.push(end - (start + id * PROBE_MS));
  const unanswered = pending.size;
  pending.clear();
  const text = noteAtEnd ? await attack() : await Promise.race([note, sleep(GRACE_MS).then(() => 'no SMTP reply yet')]);
  return { latencies, unanswered, note: text ?? '' };
}

/** A multipart message of `parts` tiny text parts (about 32 bytes each), as the issue's report sent them. */
function hostileMessage(parts: number): Buffer {
  const head = [
    'From: A <a@attacker.example>',
    `To: inbox@${DOMAIN}`,
    `Subject: ${parts} parts`,
    `Message-ID: <${randomBytes(8).toString('hex')}@attacker.example>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '',
  ].join('\r\n');
  return Buffer.concat([
    Buffer.from(head),
    Buffer.from('--b\r\nContent-Type: text/x\r\n\r\nx\r\n'.repeat(parts)),
    Buffer.from('--b--\r\n'),
  ]);
}

function admin(env: NodeJS.ProcessEnv, args: string[]): Record<string, unknown> {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`admin ${args[0]}: ${run.stderr || run.stdout}`);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

function emptySpool(dataDir: string): void {
  rmSync(join(dataDir, 'inbound-spool'), { recursive: true, force: true });
}

async function startRuntime(env: NodeJS.ProcessEnv): Promise<Runtime> {
  const child: ChildProcess = fork(join(root, 'bin/local.ts'), [], {
    cwd: root,
    env,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const found: { url?: string; smtp?: string } = {};
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the runtime did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`the runtime exited (code ${code}) before it was ready`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      found.url ??= /listening on (\S+)/.exec(line)?.[1];
      found.smtp ??= /Inbound SMTP on \S+:(\d+)/.exec(line)?.[1];
      if (found.url && found.smtp) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    url: found.url as string,
    smtpPort: Number(found.smtp),
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        // A runtime frozen in a parse never gets to its SIGTERM handler: it is killed.
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
