// check:rollback's workload: what a release does on the shared data directory before it is stopped, written into
// a ledger the next release is checked against. The first release's workload has everything a rollback must
// carry: sends (HTML that compresses, attachments, a batch with a bounce, one scheduled to go out only after the
// stop), webhooks (one always answering, one failing every first attempt, one ordered per email on a failing
// endpoint), a failed test delivery and a recovery job replaying it, and a received email over SMTP. A later
// release's workload is a send whose webhooks leave retries pending for the release after it.
import { createHash, randomBytes } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import nodemailer from 'nodemailer';
import { noUsagePlans } from '../../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../../lambdas/app/accounts';
import { loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { documentClient } from '../../lambdas/runtime/document-client';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { createRepositories } from '../../lambdas/runtime/repositories';
import { type ApiAnswer, ApiClient, sleep } from './api-client';
import type { CountingReceiver } from './receiver';
import type { RunningRelease } from './runtime-process';

/** What a release's API offers, read from its manifest's route ids: the check reads only what it serves. */
export interface Capabilities {
  readonly listEmails: boolean;
  readonly getDelivery: boolean;
  readonly attachments: boolean;
  readonly receiving: boolean;
  readonly recoveries: boolean;
  /** The API request log: listed (GET /v1/logs), and by id (GET /v1/logs/:id) where it has the route. */
  readonly requestLog: boolean;
  readonly requestLogById: boolean;
}

export function capabilitiesOf(manifestSource: string): Capabilities {
  const has = (routeId: string) => manifestSource.includes(`id: '${routeId}'`);
  return {
    listEmails: has('listEmails'),
    getDelivery: has('getDelivery'),
    attachments: has('listEmailAttachments'),
    receiving: has('listReceivedEmails'),
    recoveries: has('getRecovery'),
    requestLog: has('listApiRequests'),
    requestLogById: has('getApiRequest'),
  };
}

export interface LedgerWebhook {
  readonly name: string;
  readonly id: string;
  readonly mode: 'test' | 'live';
  /** The receiver's path: /steady/… answers 200, /flaky/… fails each event's first attempt. */
  readonly path: string;
  readonly url: string;
  readonly events: readonly string[];
}

export interface LedgerFile {
  readonly filename: string;
  readonly size: number;
  readonly sha256: string;
}

export interface LedgerEmail {
  readonly label: string;
  readonly id: string;
  /** The release whose API accepted it. */
  readonly by: string;
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
  readonly html?: string;
  readonly text?: string;
  readonly files: readonly LedgerFile[];
  /** Scheduled: its send must happen, exactly once, after the stop. */
  readonly scheduled: boolean;
}

export interface Ledger {
  accountId: string;
  testKey: string;
  liveKey: string;
  /** When the first workload began: recovery windows start here. */
  startedAt: string;
  webhooks: LedgerWebhook[];
  emails: LedgerEmail[];
  received: { id: string; subject: string; files: LedgerFile[] } | null;
  recoveries: { webhookId: string; id: string }[];
  /** Each delivery as the last release left it: webhook id → delivery id → attempts then. */
  deliveries: Record<string, Record<string, { status: string; attempts: number }>>;
  /** Entries of the API request log the first release wrote (with route, query and bodies, a 422 among them). */
  requestLog: { id: string; path: string; status: number }[];
}

/** Event types every test-mode webhook of the check takes. */
export const EMAIL_EVENTS = ['email.sent', 'email.delivered', 'email.bounced', 'email.scheduled'] as const;
const RECEIVING_DOMAIN = 'rollback-check.test';
const SUCCESS = 'success@simulator.amazonses.com';
const BOUNCE = 'bounce@simulator.amazonses.com';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const fileOf = (filename: string, bytes: Buffer): LedgerFile => ({
  filename,
  size: bytes.length,
  sha256: sha256(bytes),
});

/** An account on the scale plan (its rate limit never slows the check) with a test and a live key, made by key. */
export async function seedAccount(dynamoEndpoint: string): Promise<Pick<Ledger, 'accountId' | 'testKey' | 'liveKey'>> {
  const config = loadConfig({}, localTableDefaults());
  const client = localDynamoClient(dynamoEndpoint);
  try {
    const repos = createRepositories(client, config.tables);
    const deps = {
      ...repos,
      usagePlans: noUsagePlans,
      authorizerCache: { flush: async () => {} },
      clock: { now: () => Date.now() },
      random: randomBytes,
    };
    const account = await createAccount(deps, 'scale');
    const test = await createAccountKey(deps, { accountId: account.id, mode: 'test', name: 'check:rollback test' });
    const live = await createAccountKey(deps, { accountId: account.id, mode: 'live', name: 'check:rollback live' });
    return { accountId: account.id, testKey: test.secret, liveKey: live.secret };
  } finally {
    client.destroy();
  }
}

/** HTML that compresses as email markup does (a receipt's rows), about 8 KB. */
function receiptHtml(): string {
  const rows = Array.from(
    { length: 60 },
    (_, i) =>
      `<tr><td style="padding:4px 8px;border-bottom:1px solid #eee">Item ${i + 1}</td>` +
      `<td style="padding:4px 8px;text-align:right">${(i * 3.17).toFixed(2)} EUR</td></tr>`,
  );
  return `<html><body><h1>Receipt</h1><table>${rows.join('')}</table><p>Thank you.</p></body></html>`;
}

async function expectStatus(what: string, answer: ApiAnswer, ...ok: number[]): Promise<ApiAnswer['body']> {
  if (!ok.includes(answer.status)) {
    throw new Error(`${what}: HTTP ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  }
  return answer.body;
}

/**
 * The first release's workload. Returns once every email sent now has its events, every first attempt was made
 * (the flaky endpoints' failed), the recovery job is started and the scheduled email is due a few seconds after
 * the stop (`dueInSeconds`).
 */
export async function firstWorkload(
  running: RunningRelease,
  ledger: Ledger,
  receiver: CountingReceiver,
  options: { readonly dueInSeconds: number; readonly log: (line: string) => void },
): Promise<void> {
  const test = new ApiClient(running.url, ledger.testKey);
  const live = test.withKey(ledger.liveKey);
  const by = running.release.label;

  const hook = async (
    name: string,
    path: string,
    extra: Record<string, unknown> = {},
    mode: 'test' | 'live' = 'test',
  ) => {
    const events = mode === 'live' ? ['email.received'] : [...EMAIL_EVENTS];
    const url = receiver.url(path);
    const body = await expectStatus(
      `create webhook ${name}`,
      await (mode === 'live' ? live : test).post('/webhooks', { url, events, ...extra }),
      201,
    );
    ledger.webhooks.push({ name, id: body.id, mode, path, url, events });
    return body.id as string;
  };
  await hook('steady', '/steady/all');
  const flaky = await hook('flaky', '/flaky/all');
  // Ordered per email on a failing endpoint: its lane items hold entries while their retries are pending.
  await hook('ordered', '/flaky/ordered', { ordering: 'per_email' });
  await hook('received', '/steady/received', {}, 'live');

  // Received mail: a live receiving domain, and a message with an attachment over the local SMTP server.
  if (running.smtpPort !== undefined) {
    const domain = await expectStatus(
      'create receiving domain',
      await live.post('/domains', { name: RECEIVING_DOMAIN, capabilities: { receiving: 'enabled' } }),
      200,
      201,
    );
    const verified = await expectStatus('verify domain', await live.post(`/domains/${domain.id}/verify`), 200);
    if (verified.status !== 'verified') throw new Error(`receiving domain not verified: ${verified.status}`);
    const inbound = Buffer.from(`Received before the rollback ${randomBytes(6).toString('hex')}\n`);
    const subject = 'Received before the rollback';
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: running.smtpPort,
      secure: false,
      ignoreTLS: true,
    });
    await transport.sendMail({
      from: 'Ada <ada@sender.example>',
      to: `inbox@${RECEIVING_DOMAIN}`,
      subject,
      text: 'Hello',
      attachments: [{ filename: 'inbound.txt', content: inbound }],
    });
    transport.close();
    const stored = await until('the received email is listed', 30_000, async () => {
      const list = await live.get('/emails/receiving');
      return (list.body?.data as { id: string; subject: string }[] | undefined)?.find((e) => e.subject === subject);
    });
    ledger.received = { id: stored.id, subject, files: [fileOf('inbound.txt', inbound)] };
  }

  const send = async (label: string, email: Record<string, unknown>, files: LedgerFile[] = [], scheduled = false) => {
    const body = await expectStatus(`send ${label}`, await test.post('/emails', email), 200, 201, 202);
    ledger.emails.push({
      label,
      id: body.id,
      by,
      from: email.from as string,
      to: [email.to as string],
      subject: email.subject as string,
      ...(email.html !== undefined ? { html: email.html as string } : {}),
      ...(email.text !== undefined ? { text: email.text as string } : {}),
      files,
      scheduled,
    });
    return body.id as string;
  };
  const later = Buffer.from(`Sent after the rollback. ${randomBytes(8).toString('hex')}\n`);
  const scheduledId = await send(
    'scheduled',
    {
      from: 'Rollback <rollback@example.com>',
      to: SUCCESS,
      subject: 'Scheduled across the rollback',
      text: 'Scheduled before the stop, sent after it.',
      scheduled_at: new Date(Date.now() + 3_600_000).toISOString(),
      attachments: [{ filename: 'later.txt', content: later.toString('base64') }],
    },
    [fileOf('later.txt', later)],
    true,
  );
  const html = receiptHtml();
  await send('html', {
    from: 'Rollback <rollback@example.com>',
    to: SUCCESS,
    subject: 'Receipt (HTML that compresses)',
    html,
    text: 'Receipt',
    tags: [{ name: 'check', value: 'rollback' }],
  });
  const binary = randomBytes(24 * 1024);
  const notes = Buffer.from('Notes of the rollback check.\n'.repeat(40));
  await send(
    'attachments',
    {
      from: 'rollback@example.com',
      to: SUCCESS,
      subject: 'Two attachments',
      html: '<p>Files attached.</p>',
      attachments: [
        { filename: 'report.bin', content: binary.toString('base64') },
        { filename: 'notes.txt', content: notes.toString('base64') },
      ],
    },
    [fileOf('report.bin', binary), fileOf('notes.txt', notes)],
  );
  const batch = await expectStatus(
    'send batch',
    await test.post('/emails/batch', [
      { from: 'rollback@example.com', to: SUCCESS, subject: 'Batch 1', text: 'one' },
      { from: 'rollback@example.com', to: BOUNCE, subject: 'Batch 2 (bounces)', text: 'two' },
    ]),
    200,
    201,
    202,
  );
  (batch.data as { id: string }[]).forEach(({ id }, i) => {
    ledger.emails.push({
      label: `batch ${i + 1}`,
      id,
      by,
      from: 'rollback@example.com',
      to: [i === 0 ? SUCCESS : BOUNCE],
      subject: i === 0 ? 'Batch 1' : 'Batch 2 (bounces)',
      text: i === 0 ? 'one' : 'two',
      files: [],
      scheduled: false,
    });
  });
  // An email rendered from a template: its item carries `templateId` and its events `template_id`, which a release
  // before templates ignores (it must serve, send and deliver it as any other).
  const template = await expectStatus(
    'create template',
    await test.post('/templates', {
      name: 'Rollback',
      subject: 'Hello {{{NAME}}}',
      html: '<p>Hello {{{NAME}}}</p>',
      text: 'Hello {{{NAME}}}',
      from: 'Templates <rollback@example.com>',
    }),
    201,
  );
  await expectStatus('publish template', await test.post(`/templates/${template.id}/publish`), 200);
  const byTemplate = await expectStatus(
    'send by template',
    await test.post('/emails', { to: SUCCESS, template: { id: template.id, variables: { NAME: 'Ada & <co>' } } }),
    200,
  );
  ledger.emails.push({
    label: 'by template',
    id: byTemplate.id,
    by,
    from: 'Templates <rollback@example.com>',
    to: [SUCCESS],
    subject: 'Hello Ada & <co>',
    html: '<p>Hello Ada &amp; &lt;co&gt;</p>',
    text: 'Hello Ada & <co>',
    files: [],
    scheduled: false,
  });
  // A test event to the flaky endpoint fails (its first attempt): a failed delivery for the recovery job.
  await expectStatus('test event', await test.post(`/webhooks/${flaky}/test`), 200);

  // Every email sent now has its events, and each went to every webhook (the flaky ones failed).
  await until('the first attempts of every event', 60_000, async () => {
    const pending = await eventsWithoutAttempt(test, ledger, receiver);
    return pending.length === 0 ? true : undefined;
  });
  const recovery = await expectStatus(
    'start recovery job',
    await test.post(`/webhooks/${flaky}/recoveries`, { since: ledger.startedAt, status: 'failed' }),
    200,
    202,
  );
  ledger.recoveries.push({ webhookId: flaky, id: recovery.id });
  // Due a few seconds after the stop: the next release sends it.
  await expectStatus(
    'reschedule',
    await test.patch(`/emails/${scheduledId}`, {
      scheduled_at: new Date(Date.now() + options.dueInSeconds * 1000).toISOString(),
    }),
    200,
  );
  options.log(
    `workload: ${ledger.emails.length} emails, ${ledger.webhooks.length} webhooks, recovery job, received email`,
  );
}

/** A later release's workload: one email whose flaky webhooks' retries are left pending for the release after it. */
export async function laterWorkload(running: RunningRelease, ledger: Ledger, receiver: CountingReceiver) {
  const test = new ApiClient(running.url, ledger.testKey);
  const subject = `Sent by ${running.release.label}`;
  const email = { from: 'rollback@example.com', to: SUCCESS, subject, html: `<p>${subject}</p>` };
  const body = await expectStatus(
    `send from ${running.release.label}`,
    await test.post('/emails', email),
    200,
    201,
    202,
  );
  ledger.emails.push({
    label: `sent by ${running.release.label}`,
    id: body.id,
    by: running.release.label,
    from: email.from,
    to: [email.to],
    subject,
    html: email.html,
    files: [],
    scheduled: false,
  });
  await until(`the first attempts of ${running.release.label}'s email`, 60_000, async () => {
    const pending = await eventsWithoutAttempt(test, ledger, receiver);
    return pending.length === 0 ? true : undefined;
  });
}

/**
 * Events of the ledger's emails (by their history, as the API serves it) that a subscribed webhook has not had an
 * attempt of yet: the fan-out and first attempts still to come. Scheduled emails not yet sent have none.
 */
export async function eventsWithoutAttempt(api: ApiClient, ledger: Ledger, receiver: CountingReceiver) {
  const missing: string[] = [];
  for (const email of ledger.emails) {
    const answer = await api.get(`/emails/${email.id}`);
    if (answer.status !== 200) {
      missing.push(`${email.label}: HTTP ${answer.status}`);
      continue;
    }
    const events = (answer.body.events ?? []) as { id: string; type: string }[];
    if (!email.scheduled && !events.some((e) => e.type === 'email.delivered' || e.type === 'email.bounced')) {
      missing.push(`${email.label}: no final event yet`);
    }
    for (const event of events) {
      for (const webhook of ledger.webhooks) {
        // An ordered webhook holds an email's later events behind its earlier ones' retries: not awaited.
        if (webhook.mode === 'test' && webhook.name !== 'ordered' && webhook.events.includes(event.type)) {
          if (receiver.attempts(webhook.path, event.id).length === 0) missing.push(`${webhook.name} ${event.type}`);
        }
      }
    }
  }
  return missing;
}

/** Polls `probe` until it returns a value (not undefined), at most `timeoutMs`. */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(500);
  }
}

/**
 * Entries of the per-email ordering lanes (items `ord#…` of the deliveries table) as stored now: bare sequences,
 * and `{s, by}` maps (an entry whose row is still to come, written since issue 27; the release before skips them).
 */
export async function laneEntries(dynamoEndpoint: string): Promise<{ bare: number; maps: number }> {
  const client = localDynamoClient(dynamoEndpoint);
  try {
    const doc = documentClient(client);
    const table = loadConfig({}, localTableDefaults()).tables.deliveries;
    const counts = { bare: 0, maps: 0 };
    let start: Record<string, unknown> | undefined;
    do {
      const page = await doc.send(
        new ScanCommand({
          TableName: table,
          FilterExpression: 'begins_with(webhookId, :lane)',
          ExpressionAttributeValues: { ':lane': 'ord#' },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        for (const [name, value] of Object.entries(item)) {
          if (!name.startsWith('dlv_')) continue;
          if (typeof value === 'number') counts.bare++;
          else counts.maps++;
        }
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return counts;
  } finally {
    client.destroy();
  }
}
