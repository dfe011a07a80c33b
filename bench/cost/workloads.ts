// The workloads bench:cost drives through the real use cases, each a sample run on the local runtime with the
// meter recording: webhook deliveries (webhooks per event, endpoint speed, how full the SQS batches are) and
// emails (body size, recipients, webhooks), plus the receiver that stands in for customers' endpoints.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { noUsagePlans } from '../../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../../lambdas/app/accounts';
import { createWebhook } from '../../lambdas/app/webhooks/manage-webhooks';
import { EVENT_TYPES, type SendflowEvent } from '../../lambdas/domain/events';
import { timeOrderedId } from '../../lambdas/domain/ids';
import { queues } from '../../lambdas/manifest';
import type { LocalRuntime } from '../../lambdas/runtime/local/runtime';
import { badDayAnswer } from './bad-day';
import { emailHtml } from './email-html';
import type { Meter, Usage } from './meter';

/** fast: answers 200 at once; slow: after 2 s; bad-day: bench/cost/bad-day.ts (latency, 5xx, 429, hangs). */
export type Endpoint = 'fast' | 'slow' | 'bad-day';
export type Batching = 'full' | 'five';

export interface DeliveryWorkload {
  readonly kind: 'deliveries';
  readonly webhooks: 1 | 5;
  readonly endpoint: Endpoint;
  readonly batching: Batching;
  /**
   * One more webhook subscribed to the same events whose payload filter keeps every one of them back (issue 32):
   * what filtering costs beside the deliveries (BENCH_COST_ONLY=filters).
   */
  readonly filtered?: true;
}

/**
 * How full the emails' SQS batches are, on the sends queue and the events queue alike: `one` (each email alone:
 * a quiet account, nothing else on the queues), or the matrix's `five` and `full` (10), as busy queues hand
 * them out.
 */
export type EmailBatching = 'one' | Batching;

export interface EmailWorkload {
  readonly kind: 'emails';
  readonly sizeKb: 2 | 30 | 200;
  readonly recipients: 1 | 10 | 50;
  /** Webhooks subscribed to every email event (0: the email's own cost alone). */
  readonly webhooks: 0 | 5;
  readonly batching: EmailBatching;
}

export type Workload = DeliveryWorkload | EmailWorkload;

/** The slow endpoint's answer time (the issue's 2 s). */
export const SLOW_MS = 2_000;

export const DELIVERY_WORKLOADS: readonly DeliveryWorkload[] = ([1, 5] as const).flatMap((webhooks) =>
  (['fast', 'slow'] as const).flatMap((endpoint) =>
    (['full', 'five'] as const).map((batching) => ({ kind: 'deliveries', webhooks, endpoint, batching }) as const),
  ),
);

export const EMAIL_WORKLOADS: readonly EmailWorkload[] = (['one', 'five', 'full'] as const).flatMap((batching) =>
  ([2, 30, 200] as const).flatMap((sizeKb) =>
    ([1, 10, 50] as const).map(
      (recipients) => ({ kind: 'emails', sizeKb, recipients, webhooks: 0, batching }) as const,
    ),
  ),
);

/**
 * Issue 29's bad day: M = 5 webhooks whose endpoints answer as bench/cost/bad-day.ts has them, full batches (a
 * busy stage), every retry run to its end (time compressed: see runDeliveries).
 */
export const BAD_DAY_WORKLOAD: DeliveryWorkload = {
  kind: 'deliveries',
  webhooks: 5,
  endpoint: 'bad-day',
  batching: 'full',
};

/** Item 3's email workload: 30 KB, 10 recipients, 5 webhooks (fast endpoints). */
export const PARTITION_EMAIL_WORKLOAD: EmailWorkload = {
  kind: 'emails',
  sizeKb: 30,
  recipients: 10,
  webhooks: 5,
  batching: 'one',
};

const BATCHING_LABELS: Readonly<Record<EmailBatching, string>> = {
  one: 'one per batch',
  five: 'five per batch',
  full: 'full batches',
};

export function label(w: Workload): string {
  return w.kind === 'deliveries'
    ? `deliveries M=${w.webhooks} ${w.endpoint} ${w.batching === 'full' ? 'full batches' : 'five per batch'}${w.filtered ? ' +1 filtered webhook' : ''}`
    : `email ${w.sizeKb}KB x${w.recipients}${w.webhooks ? ` +${w.webhooks} webhooks` : ''} ${BATCHING_LABELS[w.batching]}`;
}

export interface Sample {
  readonly workload: Workload;
  readonly usage: Usage;
  /** First-attempt deliveries the receiver got (for email workloads, those its events caused). */
  readonly deliveries: number;
  /** Requests the receiver got (first attempts and retries). */
  readonly attempts: number;
  /** TCP connections the receiver accepted (a new connection for each request that found none to reuse). */
  readonly connections: number;
  readonly emails: number;
  readonly recipients: number;
  /** Events the pipeline published (email workloads), counted from the events queue's messages. */
  readonly events: number;
  readonly apiRequests: number;
  /** Bytes of the webhook POSTs as sent (request line, headers, body): data transfer out. */
  readonly egressBytes: number;
  readonly seconds: number;
}

// ---------------------------------------------------------------------------------------------------------
// The receiver: customers' endpoints, answering 200 after `delayMs` (or as the bad day's model has it), counting
// what each POST carried and the connections it accepted.

export class Receiver {
  hits = 0;
  bytes = 0;
  delayMs = 0;
  connections = 0;
  /** Answers from bench/cost/bad-day.ts instead of 200 after delayMs. */
  badDay = false;
  private constructor(private readonly server: Server) {}

  static async start(): Promise<Receiver> {
    let self: Receiver | undefined;
    const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
      let body = 0;
      req.on('data', (chunk: Buffer) => {
        body += chunk.length;
      });
      req.on('end', () => {
        const r = self as Receiver;
        const head = `${req.method} ${req.url} HTTP/1.1\r\n`;
        let headers = 2; // the blank line
        for (let i = 0; i < req.rawHeaders.length; i += 2) {
          headers += Buffer.byteLength(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`);
        }
        const n = r.hits;
        r.hits += 1;
        r.bytes += Buffer.byteLength(head) + headers + body;
        if (!r.badDay) {
          setTimeout(() => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok'), r.delayMs);
          return;
        }
        // A hang never answers: the sender's time-out ends it (and closes the socket).
        const answer = badDayAnswer(n);
        if (answer.kind === 'hang') return;
        setTimeout(
          () => res.writeHead(answer.status, { 'Content-Type': 'text/plain', ...answer.headers }).end('ok'),
          answer.latencyMs,
        );
      });
    });
    server.on('connection', () => {
      if (self) self.connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new Receiver(server);
    return self;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/${path}`;
  }

  reset(endpoint: Endpoint): void {
    this.hits = 0;
    this.bytes = 0;
    this.connections = 0;
    this.delayMs = endpoint === 'slow' ? SLOW_MS : 0;
    this.badDay = endpoint === 'bad-day';
  }

  stop(): void {
    this.server.closeAllConnections();
    this.server.close();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Runs.

export interface Harness {
  readonly runtime: LocalRuntime;
  readonly meter: Meter;
  readonly receiver: Receiver;
}

const FROM = 'Acme <receipts@acme.test>';

/** A tenant of its own (scale plan, a test key) and `webhooks` webhooks on the receiver, subscribed to `events`. */
async function newTenant(h: Harness, webhooks: number, events: readonly string[]) {
  const deps = { ...h.runtime.services, usagePlans: noUsagePlans };
  const account = await createAccount(deps, 'scale');
  const { secret } = await createAccountKey(deps, { accountId: account.id, mode: 'test', name: 'bench' });
  const tenant = { accountId: account.id, mode: 'test' } as const;
  for (let i = 0; i < webhooks; i++) {
    const input = { url: h.receiver.url(`${account.id}/${i}`), events: [...events], format: 'standard' } as const;
    await createWebhook(h.runtime.services, tenant, input);
  }
  return { tenant, key: secret };
}

async function post(h: Harness, key: string, path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${h.runtime.url}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as unknown;
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

/** The sends queue empty and still so a moment later (every email of the round handed to the provider). */
async function waitForSends(h: Harness): Promise<void> {
  const deadline = Date.now() + 60_000;
  let quiet = 0;
  while (quiet < 3) {
    if (Date.now() > deadline) throw new Error('the sends queue did not drain within a minute');
    await h.runtime.queues.sends.idle();
    await new Promise((r) => setTimeout(r, 30));
    quiet = h.runtime.queues.sends.depth === 0 ? quiet + 1 : 0;
  }
}

/** Every queue empty (nothing ready, delayed or in flight) and still so a moment later (the simulator's steps). */
async function settle(h: Harness): Promise<void> {
  const deadline = Date.now() + 300_000;
  let quiet = 0;
  while (quiet < 3) {
    if (Date.now() > deadline) throw new Error('the queues did not settle within 5 minutes');
    await Promise.all(Object.values(h.runtime.queues).map((q) => q.idle()));
    await new Promise((r) => setTimeout(r, 30));
    quiet = Object.values(h.runtime.queues).every((q) => q.depth === 0) ? quiet + 1 : 0;
  }
}

/** Emails per sample: enough copies to average over, few enough for a bounded run (whole rounds). */
function emailSampleSize(w: EmailWorkload): number {
  const round = emailRound(w);
  return Math.ceil(Math.max(20, Math.round(60 / w.recipients)) / round) * round;
}

/** Emails a round holds back together: one batch of the sends queue, then of the events queue (10 at most). */
function emailRound(w: EmailWorkload): number {
  return { one: 1, five: 5, full: 10 }[w.batching];
}

export async function runEmails(h: Harness, w: EmailWorkload, count = emailSampleSize(w)): Promise<Sample> {
  const { key } = await newTenant(
    h,
    w.webhooks,
    EVENT_TYPES.filter((t) => t.startsWith('email.')),
  );
  const body = emailHtml(w.sizeKb);
  h.receiver.reset('fast');
  await settle(h);
  await h.meter.start();
  const started = performance.now();
  const round = emailRound(w);
  for (let i = 0; i < count; i++) {
    // A round's sends, then its events, wait on their queue (as behind a busy queue's other messages) until the
    // round is all there, then leave in one batch. One email a round: each alone, as a quiet account's.
    if (round > 1 && i % round === 0) {
      h.meter.pause('sends');
      h.meter.pause('events');
    }
    const to = Array.from({ length: w.recipients }, (_, r) => `customer${i}-${r}@example.com`);
    await h.meter.api(() =>
      post(h, key, '/emails', { from: FROM, to, subject: `Your receipt #${100_000 + i}`, html: body }),
    );
    if (round > 1 && i % round === round - 1) {
      h.meter.resume('sends');
      await waitForSends(h);
      h.meter.resume('events');
      await settle(h);
    }
  }
  await settle(h);
  const seconds = (performance.now() - started) / 1000;
  // The delivery figures the worker still holds (at most 5 s: app/webhooks/figure-tally) are written in the sample.
  // (Optional: BENCH_BEFORE runs this file against a tree from before them.)
  await (h.runtime.services as { figureTally?: { flush(): Promise<void> } }).figureTally?.flush();
  const usage = await h.meter.stop();
  return {
    workload: w,
    usage,
    deliveries: h.receiver.hits,
    attempts: h.receiver.hits,
    connections: h.receiver.connections,
    emails: count,
    recipients: count * w.recipients,
    events: usage.sqs.get('events')?.messages ?? 0,
    apiRequests: count,
    egressBytes: h.receiver.bytes,
    seconds,
  };
}

/**
 * Rounds per sample and events per round. A round's events are published together (one SendMessageBatch, one
 * events batch) while the deliveries queue is held, so its jobs then leave in batches as full as the round
 * allows, as from a backlog; the pipeline settles before the next round. Full: a round fills one batch of the
 * deliveries queue's event source (the manifest's batchSize: 10 jobs, or more with a batching window), at least
 * 10 events (one full events batch). Five: the events of 5 jobs a round (5 events at M = 1, 1 at M = 5).
 */
function deliveryRounds(w: DeliveryWorkload): { rounds: number; perRound: number } {
  if (w.batching === 'five') return { rounds: w.endpoint === 'fast' ? 40 : 3, perRound: Math.ceil(5 / w.webhooks) };
  const perRound = Math.max(10, Math.ceil(queues.deliveries.batchSize / w.webhooks));
  // Fast: about 200 deliveries at M = 1 and 5 (whole rounds); slow: one round; the bad day: about 500.
  const target = { fast: 200, slow: 1, 'bad-day': 500 }[w.endpoint];
  return { rounds: Math.max(1, Math.round(target / (perRound * w.webhooks))), perRound };
}

/**
 * First-attempt deliveries of email.delivered events, as the simulator publishes them, for emails sent (and
 * settled) before the webhooks existed and before the meter started: the events consumer's history write then
 * finds its email as in production, whatever the email data model is.
 */
export async function runDeliveries(h: Harness, w: DeliveryWorkload): Promise<Sample> {
  const { tenant, key } = await newTenant(h, 0, []);
  const { rounds, perRound } = deliveryRounds(w);
  const total = rounds * perRound;
  const sent: { id: string; to: string }[] = [];
  for (let i = 0; i < total; i += 100) {
    const emails = Array.from({ length: Math.min(100, total - i) }, (_, j) => ({
      from: FROM,
      to: [`customer${i + j}@example.com`],
      subject: `Your receipt #${100_000 + i + j}`,
      text: 'Thanks for your order.',
    }));
    const { data } = (await post(h, key, '/emails/batch', emails)) as { data: { id: string }[] };
    for (const [j, { id }] of data.entries()) sent.push({ id, to: `customer${i + j}@example.com` });
  }
  await settle(h);
  for (let i = 0; i < w.webhooks; i++) {
    const input = {
      url: h.receiver.url(`${tenant.accountId}/${i}`),
      events: ['email.delivered'],
      format: 'standard',
    } as const;
    await createWebhook(h.runtime.services, tenant, input);
  }
  if (w.filtered) {
    // Its filter matches none of these events: each costs a match, and the batch one counter write.
    const filter = { tags: { plan: 'enterprise' } };
    const url = h.receiver.url(`${tenant.accountId}/filtered`);
    await createWebhook(h.runtime.services, tenant, { url, events: ['email.delivered'], format: 'standard', filter });
  }
  h.receiver.reset(w.endpoint);
  await h.meter.start();
  const started = performance.now();
  const events = sent.map(({ id, to }, i): SendflowEvent => {
    const at = Date.now();
    return {
      id: timeOrderedId('evt', at, randomBytes),
      type: 'email.delivered',
      accountId: tenant.accountId,
      mode: tenant.mode,
      timestamp: new Date(at).toISOString(),
      emailId: id,
      to,
      data: { from: FROM, subject: `Your receipt #${100_000 + i}` },
    };
  });
  const publish = h.runtime.services.events.publish.bind(h.runtime.services.events);
  if (w.endpoint === 'bad-day')
    await badDayRounds(h, rounds, (r) => publish(events.slice(r * perRound, (r + 1) * perRound)));
  else {
    for (let r = 0; r < rounds; r++) {
      // The round's jobs are all queued before the worker receives: one full batch (or 5 jobs), as from a backlog.
      h.meter.pause('deliveries');
      await publish(events.slice(r * perRound, (r + 1) * perRound));
      await h.runtime.queues.events.idle();
      h.meter.resume('deliveries');
      await settle(h);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  // The delivery figures the worker still holds (at most 5 s: app/webhooks/figure-tally) are written in the sample.
  // (Optional: BENCH_BEFORE runs this file against a tree from before them.)
  await (h.runtime.services as { figureTally?: { flush(): Promise<void> } }).figureTally?.flush();
  const usage = await h.meter.stop();
  return {
    workload: w,
    usage,
    // Every first attempt reached the receiver (a bad day's retries too: the receiver's hits are attempts).
    deliveries: w.endpoint === 'bad-day' ? total * w.webhooks : h.receiver.hits,
    attempts: h.receiver.hits,
    connections: h.receiver.connections,
    emails: 0,
    recipients: 0,
    events: total,
    apiRequests: 0,
    egressBytes: h.receiver.bytes,
    seconds,
  };
}

/** Rounds after the last that only hand out what is still held; a bound, so a loop that never drains ends. */
const MAX_DRAIN_ROUNDS = 200;

/**
 * The bad day's rounds, time compressed. Every message sent with a delay (a retry through SQS DelaySeconds or a
 * Scheduler schedule, a job the lanes send back for later) is counted as sent, held by the meter, and handed
 * out at the start of the next round, ready, among that round's first attempts, as a busy queue mixes them:
 * a retry that would come 1 s, 5 s (Retry-After), 30 s, 5 or 30 min later comes one round later instead. Each
 * round: both lanes held while the round's events are fanned out and the held messages put back; the shared
 * lane drained (its jobs for the slow lane wait there, so the slow lane also gets full batches); then the slow
 * lane; then everything settles. Rounds go on after the last events until nothing is held.
 */
async function badDayRounds(h: Harness, rounds: number, publishRound: (r: number) => Promise<void>): Promise<void> {
  h.meter.holdDelayed('deliveries');
  h.meter.holdDelayed('slowDeliveries');
  for (let r = 0; r < rounds || h.meter.heldDelayed > 0; r++) {
    if (r >= rounds + MAX_DRAIN_ROUNDS) throw new Error(`the bad day still holds ${h.meter.heldDelayed} messages`);
    h.meter.pause('deliveries');
    h.meter.pause('slowDeliveries');
    h.meter.releaseDelayed();
    if (r < rounds) {
      await publishRound(r);
      await h.runtime.queues.events.idle();
    }
    h.meter.resume('deliveries');
    await h.runtime.queues.deliveries.idle();
    h.meter.resume('slowDeliveries');
    await settle(h);
  }
}
