// The attacker side of `npm run bench:attackers`: tenant A's scenarios, in a process of their own (forked by
// bench/attackers.ts), so building 16k-part messages, a thousand poll sockets and twenty 10 MB transfers never
// delay the measuring process's event loop, where B's round trips are timed. Driven over IPC:
//   {init: {url, smtpPort, a, aLive?}}  → {ready: [scenario names]}
//   {prepare: name}                      → {prepared: name}: what the attack needs in place (A's emails)
//   {start: name}                        → {started: name} or {failed: message}
//   {window: true}                       → {windowed: true}: A's answers counted from now (B's window starts)
//   {stop: true}                         → {stopped: [[status, count], …]} (counted in the window), attack ended
// Scenarios are a list (SCENARIOS below): each starts its attack and returns a stop function.
// Env: BENCH_POLLS (default 1000), BENCH_ATTACHMENT_MB (default 10), BENCH_ATTACHMENT_SENDERS (default 20).

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { type Client, client } from './attackers-client';
import { makeReceivingDomain, sendHostileMessage } from './hostile-mail';
import { positiveInt } from './report';

const POLLS = positiveInt('BENCH_POLLS', 1_000);
const ATTACHMENT_MB = positiveInt('BENCH_ATTACHMENT_MB', 10);
const ATTACHMENT_SENDERS = positiveInt('BENCH_ATTACHMENT_SENDERS', 20);
const LIST_CALLERS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a scenario's attack is given. */
interface Arena {
  readonly a: Client;
  /** A's live-mode client (receiving is live mode's); absent for an older runtime that prints none. */
  readonly aLive?: Client;
  readonly url: string;
  readonly smtpPort: number;
  /** A's answers by status (429s included): shows what the runtime refused. */
  readonly statuses: Map<string, number>;
}

interface Scenario {
  readonly name: string;
  /** What the attack needs in place first (A's emails to list), before the runtime is let settle. */
  readonly prepare?: (arena: Arena) => Promise<void>;
  /** Starts the attack (returns once it is in effect) and returns the function that stops it. */
  readonly start: (arena: Arena) => Promise<() => Promise<void>>;
}

const count = (arena: Arena, status: number | string) =>
  arena.statuses.set(String(status), (arena.statuses.get(String(status)) ?? 0) + 1);

/** Runs `round` in `workers` loops until stopped; each loop's answers are counted by status. */
function loops(arena: Arena, workers: number, round: (signal: AbortSignal, i: number) => Promise<void>) {
  const stop = new AbortController();
  const running = Array.from({ length: workers }, async (_, i) => {
    while (!stop.signal.aborted) await round(stop.signal, i).catch(() => count(arena, 'error'));
  });
  return async () => {
    stop.abort();
    await Promise.allSettled(running);
  };
}

/** A `Retry-After` honoured, as a client would (at most a minute: a quota's runs to midnight); else 1 s. */
async function backOff(res: Response, signal: AbortSignal): Promise<void> {
  const seconds = Number(res.headers.get('retry-after')) || 1;
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.min(seconds, 60) * 1000);
    signal.addEventListener('abort', () => resolve(clearTimeout(timer)), { once: true });
  });
}

const listenFlood: Scenario = {
  name: `A: ${POLLS} listen polls`,
  async start(arena) {
    const sessions: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await arena.a.call('/listen-sessions', { method: 'POST', body: {} });
      if (res.status === 201) sessions.push(((await res.json()) as { id: string }).id);
    }
    if (!sessions.length) throw new Error('A could not open a listen session');
    const stop = loops(arena, POLLS, async (signal, i) => {
      const res = await arena.a.call(`/listen-sessions/${sessions[i % sessions.length]}/events?wait=20`, { signal });
      count(arena, res.status);
      await res.arrayBuffer();
      if (res.status !== 200) await backOff(res, signal);
    });
    await sleep(3_000); // the polls open (A's rate limit spreads them over 2 s), then wait
    return stop;
  },
};

const attachments: Scenario = {
  name: `A: ${ATTACHMENT_MB} MB attachments ×${ATTACHMENT_SENDERS}`,
  async start(arena) {
    const file = Buffer.alloc(ATTACHMENT_MB * 1024 * 1024, 'x');
    const files = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/pdf', 'Content-Length': file.length }).end(file);
    });
    files.listen(0, '127.0.0.1');
    await once(files, 'listening');
    const base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    let n = 0;
    const stop = loops(arena, ATTACHMENT_SENDERS, async (signal) => {
      const res = await arena.a.call('/emails', {
        method: 'POST',
        signal,
        body: {
          from: 'a@acme.test',
          to: 'success@simulator.amazonses.com',
          subject: 'Report',
          text: 'Attached.',
          attachments: [{ filename: 'report.pdf', path: `${base}/report-${n++}.pdf` }],
        },
      });
      count(arena, res.status);
      await res.arrayBuffer();
      if (res.status === 429) await backOff(res, signal);
    });
    await sleep(1_000);
    return async () => {
      await stop();
      files.closeAllConnections();
      files.close();
    };
  },
};

const filteredLists: Scenario = {
  name: `A: ${LIST_CALLERS} filtered email lists`,
  async prepare(arena) {
    // A's 1,000 emails (10 batches of 100), sent and delivered (the simulator at once) before B's window: the
    // measuring side waits for the runtime to settle after this.
    for (let i = 0; i < 10; i++) {
      const res = await arena.a.call('/emails/batch', {
        method: 'POST',
        body: Array.from({ length: 100 }, (_, j) => ({
          from: 'a@acme.test',
          to: `a${i}-${j}@example.com`,
          subject: 'Receipt',
          text: 'Thanks',
        })),
      });
      if (res.status !== 200) throw new Error(`A's batch: ${res.status} ${await res.text()}`);
    }
  },
  async start(arena) {
    // Lists filtered as the attacker did: a status that is read from the newest emails (queued), and a
    // recipient nobody has.
    const queries = ['/emails?status=queued&limit=100', '/emails?to=nobody@example.com&limit=100'];
    const stop = loops(arena, LIST_CALLERS, async (signal, i) => {
      const res = await arena.a.call(queries[i % queries.length] as string, { signal });
      count(arena, res.status);
      await res.arrayBuffer();
      if (res.status === 429) await backOff(res, signal);
    });
    await sleep(500);
    return stop;
  },
};

/** A holds 20 SMTP connections open (EHLO, then a NOOP every 5 s), as the report did; the runtime caps them. */
const heldSmtp: Scenario = {
  name: 'A: 20 held SMTP connections',
  async start(arena) {
    const sockets = Array.from({ length: 20 }, () => {
      const socket = connect(arena.smtpPort, '127.0.0.1');
      socket.on('error', () => count(arena, 'smtp error'));
      socket.on('data', (chunk: Buffer) => {
        const code = chunk.toString('latin1').slice(0, 3);
        if (code === '421') count(arena, 'smtp 421');
      });
      socket.write('EHLO attacker.example\r\n');
      return socket;
    });
    const noop = setInterval(() => {
      for (const socket of sockets) if (!socket.destroyed) socket.write('NOOP\r\n');
    }, 5_000);
    await sleep(1_000);
    return async () => {
      clearInterval(noop);
      for (const socket of sockets) socket.destroy();
    };
  },
};

/** A mails its own receiving domain a message of 16,000 parts, again and again: the parse must not freeze B. */
const hostileInbound: Scenario = {
  name: 'A: hostile inbound (16k parts, repeated)',
  async start(arena) {
    const domain = `a-${Date.now()}.attacker.example`;
    const live = arena.aLive;
    if (!live) throw new Error('the runtime gave A no live key');
    await makeReceivingDomain(
      (path, init) => live.call(path, { method: init.method, ...(init.body ? { body: JSON.parse(init.body) } : {}) }),
      domain,
    );
    let stopped = false;
    const sending = (async () => {
      while (!stopped) count(arena, (await sendHostileMessage(arena.smtpPort, 16_000, domain)).slice(0, 8));
    })();
    await sleep(500);
    return async () => {
      stopped = true;
      await sending;
    };
  },
};

const SCENARIOS: readonly Scenario[] = [listenFlood, attachments, filteredLists, heldSmtp, hostileInbound];

type Command =
  | { init: { url: string; smtpPort: number; a: string; aLive?: string } }
  | { prepare: string }
  | { start: string }
  | { window: true }
  | { stop: true };

const reply = (message: unknown) => process.send?.(message);
let arena: Arena | undefined;
let stopAttack: (() => Promise<void>) | undefined;

process.on('message', (command: Command) => {
  void (async () => {
    if ('init' in command) {
      const { url, smtpPort, a, aLive } = command.init;
      arena = {
        a: client(url, a),
        ...(aLive ? { aLive: client(url, aLive) } : {}),
        url,
        smtpPort,
        statuses: new Map(),
      };
      reply({ ready: SCENARIOS.map((s) => s.name) });
    } else if ('prepare' in command) {
      const scenario = SCENARIOS.find((s) => s.name === command.prepare);
      if (!arena || !scenario) return reply({ failed: `no scenario ${command.prepare}` });
      await scenario.prepare?.(arena);
      reply({ prepared: scenario.name });
    } else if ('start' in command) {
      const scenario = SCENARIOS.find((s) => s.name === command.start);
      if (!arena || !scenario) return reply({ failed: `no scenario ${command.start}` });
      arena.statuses.clear();
      stopAttack = await scenario.start(arena);
      reply({ started: scenario.name });
    } else if ('window' in command) {
      arena?.statuses.clear(); // A's answers within B's window only
      reply({ windowed: true });
    } else if ('stop' in command) {
      const answers = [...(arena?.statuses ?? [])];
      await stopAttack?.();
      stopAttack = undefined;
      reply({ stopped: answers });
    }
  })().catch((error: unknown) =>
    reply({ failed: `${String((error as Error).stack ?? error)} ${String((error as Error).cause ?? '')}` }),
  );
});
process.on('disconnect', () => process.exit(0));
