// check:rollback's checks of a running release against the ledger: everything earlier releases wrote is served
// by its API (what it has routes for), then, once the pipeline settles, every event reached every webhook that
// takes it exactly once (the receiver's count), every delivery row agrees with the requests the receiver got,
// and every scheduled email was sent exactly once.
import { createHash } from 'node:crypto';
import type { ApiClient } from './api-client';
import type { CountingReceiver } from './receiver';
import type { Capabilities, Ledger, LedgerFile, LedgerWebhook } from './workload';
import { until } from './workload';

export interface Clients {
  readonly test: ApiClient;
  readonly live: ApiClient;
}

const clientOf = (clients: Clients, mode: 'test' | 'live') => (mode === 'live' ? clients.live : clients.test);

interface DeliveryRow {
  id: string;
  status: string;
  attempts: number;
  event: string;
}

/** Every delivery in a webhook's log, newest first, page after page. */
export async function listDeliveries(api: ApiClient, webhookId: string): Promise<DeliveryRow[] | string> {
  const rows: DeliveryRow[] = [];
  let after: string | undefined;
  for (let page = 0; page < 50; page++) {
    const answer = await api.get(`/webhooks/${webhookId}/deliveries?limit=100${after ? `&after=${after}` : ''}`);
    if (answer.status !== 200) return `HTTP ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`;
    rows.push(...(answer.body.data as DeliveryRow[]));
    if (!answer.body.has_more) return rows;
    after = rows.at(-1)?.id;
  }
  return rows;
}

/** Notes every webhook's deliveries as they are now in the ledger; returns how many and how many are pending. */
export async function noteDeliveries(clients: Clients, ledger: Ledger) {
  let total = 0;
  let pending = 0;
  for (const webhook of ledger.webhooks) {
    const rows = await listDeliveries(clientOf(clients, webhook.mode), webhook.id);
    if (typeof rows === 'string') throw new Error(`listing ${webhook.name}'s deliveries: ${rows}`);
    const noted: Record<string, { status: string; attempts: number }> = {};
    ledger.deliveries[webhook.id] = noted;
    for (const row of rows) {
      noted[row.id] = { status: row.status, attempts: row.attempts };
      total++;
      if (row.status === 'pending') pending++;
    }
  }
  return { total, pending };
}

/**
 * Notes the newest entries of the test key's API request log, after a request refused with 422: entries with the
 * route, query and bodies this release stores (and a failure's copy in its status class's index), which the
 * release rolled back to must serve by id.
 */
export async function noteRequestLog(clients: Clients, ledger: Ledger) {
  const refused = await clients.test.post('/webhooks?from=rollback-check', { url: 'not a url', events: [] });
  if (refused.status !== 422) throw new Error(`the refused webhook answered ${refused.status}, not 422`);
  const list = await clients.test.get('/logs?limit=20');
  if (list.status !== 200) throw new Error(`listing the API request log: HTTP ${list.status}`);
  ledger.requestLog = (list.body.data as { id: string; path: string; status: number }[]).map(
    ({ id, path, status }) => ({ id, path, status }),
  );
  if (!ledger.requestLog.some((e) => e.status === 422)) throw new Error('the 422 is not in the API request log');
}

async function checkFiles(
  api: ApiClient,
  what: string,
  path: string,
  files: readonly LedgerFile[],
  problems: string[],
): Promise<void> {
  const list = await api.get(path);
  if (list.status !== 200) {
    problems.push(`${what}: attachments HTTP ${list.status} ${JSON.stringify(list.body).slice(0, 200)}`);
    return;
  }
  const served = list.body.data as { filename: string; size: number; download_url?: string }[];
  for (const file of files) {
    const match = served.find((s) => s.filename === file.filename);
    if (!match) {
      problems.push(`${what}: attachment ${file.filename} not listed`);
      continue;
    }
    if (match.size !== file.size) problems.push(`${what}: ${file.filename} size ${match.size}, sent ${file.size}`);
    if (!match.download_url) {
      problems.push(`${what}: ${file.filename} has no download_url`);
      continue;
    }
    const { status, bytes } = await api.download(match.download_url);
    const sha = createHash('sha256').update(bytes).digest('hex');
    if (status !== 200 || sha !== file.sha256) {
      problems.push(
        `${what}: ${file.filename} download HTTP ${status}, ${sha === file.sha256 ? 'same' : 'other'} bytes`,
      );
    }
  }
}

/** What earlier releases wrote, read through this one's API. Returns the problems found (none: all served). */
export async function checkServed(clients: Clients, ledger: Ledger, caps: Capabilities): Promise<string[]> {
  const problems: string[] = [];
  // Each entry by id where the release can; else listed, checked first, while the newest 100 are still the last
  // release's.
  if (caps.requestLog) {
    const list = caps.requestLogById ? null : await clients.test.get('/logs?limit=100');
    const listed = new Map(
      ((list?.body?.data ?? []) as { id: string; path: string; status: number }[]).map((e) => [e.id, e]),
    );
    const unread: string[] = [];
    for (const entry of ledger.requestLog) {
      const got = list
        ? { status: list.status, body: listed.get(entry.id) }
        : await clients.test.get(`/logs/${entry.id}`);
      if (got.status !== 200 || got.body?.path !== entry.path || got.body?.status !== entry.status)
        unread.push(
          `${entry.id} (${entry.status} ${entry.path}): HTTP ${got.status}, ${got.body ? 'differs' : 'absent'}`,
        );
    }
    if (unread.length)
      problems.push(
        `API request log: ${unread.length} of ${ledger.requestLog.length} entries not served, e.g. ${unread[0]}`,
      );
  }

  for (const webhook of ledger.webhooks) {
    const api = clientOf(clients, webhook.mode);
    const got = await api.get(`/webhooks/${webhook.id}`);
    if (got.status !== 200) problems.push(`webhook ${webhook.name}: HTTP ${got.status}`);
    else if (got.body.url !== webhook.url) problems.push(`webhook ${webhook.name}: url ${got.body.url}`);
  }
  for (const mode of ['test', 'live'] as const) {
    const list = await clientOf(clients, mode).get('/webhooks');
    const ids = new Set(((list.body?.data ?? []) as { id: string }[]).map((w) => w.id));
    for (const webhook of ledger.webhooks.filter((w) => w.mode === mode)) {
      if (!ids.has(webhook.id)) problems.push(`webhook ${webhook.name} missing from GET /v1/webhooks (${list.status})`);
    }
  }

  for (const email of ledger.emails) {
    const got = await clients.test.get(`/emails/${email.id}`);
    if (got.status !== 200) {
      problems.push(`email ${email.label}: HTTP ${got.status} ${JSON.stringify(got.body).slice(0, 200)}`);
      continue;
    }
    const body = got.body;
    if (body.subject !== email.subject) problems.push(`email ${email.label}: subject ${JSON.stringify(body.subject)}`);
    if (body.from !== email.from) problems.push(`email ${email.label}: from ${JSON.stringify(body.from)}`);
    if (JSON.stringify(body.to) !== JSON.stringify(email.to)) problems.push(`email ${email.label}: to ${body.to}`);
    // Bodies: compared where this release's email object carries them.
    if ('html' in body && (body.html ?? undefined) !== email.html) problems.push(`email ${email.label}: html differs`);
    if ('text' in body && (body.text ?? undefined) !== email.text) problems.push(`email ${email.label}: text differs`);
    if (caps.attachments && email.files.length) {
      await checkFiles(clients.test, `email ${email.label}`, `/emails/${email.id}/attachments`, email.files, problems);
    }
  }
  if (caps.listEmails) {
    const list = await clients.test.get('/emails?limit=100');
    const ids = new Set(((list.body?.data ?? []) as { id: string }[]).map((e) => e.id));
    for (const email of ledger.emails) {
      if (!ids.has(email.id)) problems.push(`email ${email.label} missing from GET /v1/emails (${list.status})`);
    }
  }

  for (const webhook of ledger.webhooks) {
    const api = clientOf(clients, webhook.mode);
    const rows = await listDeliveries(api, webhook.id);
    if (typeof rows === 'string') {
      problems.push(`deliveries of ${webhook.name}: ${rows}`);
      continue;
    }
    const served = new Map(rows.map((row) => [row.id, row]));
    const noted = Object.entries(ledger.deliveries[webhook.id] ?? {});
    // One line per webhook and kind of problem: a release that cannot read a layout misses every row of it.
    const missing: string[] = [];
    const unreadable: string[] = [];
    for (const [id, before] of noted) {
      const row = served.get(id);
      if (!row) missing.push(`${id} (${before.status})`);
      else if (row.attempts < before.attempts) {
        problems.push(`delivery ${id} (${webhook.name}): ${row.attempts} attempts, ${before.attempts} before`);
      }
      if (caps.getDelivery) {
        const one = await api.get(`/webhooks/${webhook.id}/deliveries/${id}`);
        if (one.status !== 200) unreadable.push(`${id}: HTTP ${one.status}`);
      }
    }
    if (missing.length) {
      problems.push(
        `webhook ${webhook.name}: ${missing.length} of ${noted.length} deliveries missing from its log, e.g. ${missing[0]}`,
      );
    }
    if (unreadable.length) {
      problems.push(
        `webhook ${webhook.name}: ${unreadable.length} of ${noted.length} deliveries not served by id, e.g. ${unreadable[0]}`,
      );
    }
  }

  if (caps.receiving && ledger.received) {
    const { id, subject, files } = ledger.received;
    const got = await clients.live.get(`/emails/receiving/${id}`);
    if (got.status !== 200)
      problems.push(`received email: HTTP ${got.status} ${JSON.stringify(got.body).slice(0, 200)}`);
    else if (got.body.subject !== subject) problems.push(`received email: subject ${JSON.stringify(got.body.subject)}`);
    await checkFiles(clients.live, 'received email', `/emails/receiving/${id}/attachments`, files, problems);
  }
  if (caps.recoveries) {
    for (const { webhookId, id } of ledger.recoveries) {
      const got = await clients.test.get(`/webhooks/${webhookId}/recoveries/${id}`);
      if (got.status !== 200) problems.push(`recovery job ${id}: HTTP ${got.status}`);
    }
  }
  return problems;
}

/** The events a test-mode webhook of the ledger takes, per email, as the emails' histories say now. */
async function expectedEvents(clients: Clients, ledger: Ledger) {
  const expected: { webhook: LedgerWebhook; eventId: string; type: string; email: string }[] = [];
  const histories = new Map<string, { id: string; type: string }[]>();
  for (const email of ledger.emails) {
    const got = await clients.test.get(`/emails/${email.id}`);
    const events = (got.status === 200 ? got.body.events : []) as { id: string; type: string }[];
    histories.set(email.id, events);
    for (const webhook of ledger.webhooks.filter((w) => w.mode === 'test')) {
      for (const event of events.filter((e) => webhook.events.includes(e.type))) {
        expected.push({ webhook, eventId: event.id, type: event.type, email: email.label });
      }
    }
  }
  return { expected, histories };
}

/**
 * Waits until the pipeline has nothing left to do for the ledger: every email sent (scheduled ones included) with
 * its final event, every expected event answered 200 by the receiver, no delivery pending, every recovery job
 * done. Throws, naming what is missing, after `timeoutMs`.
 */
export async function settle(
  clients: Clients,
  ledger: Ledger,
  receiver: CountingReceiver,
  caps: Capabilities,
  timeoutMs: number,
  log: (line: string) => void = () => {},
): Promise<void> {
  let missing: string[] = [];
  let told = Date.now();
  try {
    await until('the pipeline to settle', timeoutMs, async () => {
      missing = [];
      const { expected, histories } = await expectedEvents(clients, ledger);
      for (const email of ledger.emails) {
        const types = (histories.get(email.id) ?? []).map((e) => e.type);
        if (!types.includes('email.delivered') && !types.includes('email.bounced')) {
          missing.push(`email ${email.label}: not delivered yet (${types.join(', ') || 'no events'})`);
        }
      }
      for (const { webhook, eventId, type, email } of expected) {
        if (!receiver.attempts(webhook.path, eventId).some((r) => r.status === 200)) {
          missing.push(`${type} of ${email} not delivered to ${webhook.name}`);
        }
      }
      for (const webhook of ledger.webhooks) {
        const rows = await listDeliveries(clientOf(clients, webhook.mode), webhook.id);
        if (typeof rows === 'string') missing.push(`deliveries of ${webhook.name}: ${rows}`);
        else {
          for (const row of rows.filter((r) => r.status === 'pending')) {
            missing.push(`delivery ${row.id} (${webhook.name}) still pending`);
          }
        }
      }
      if (caps.recoveries) {
        for (const { webhookId, id } of ledger.recoveries) {
          const got = await clients.test.get(`/webhooks/${webhookId}/recoveries/${id}`);
          if (got.body?.status !== 'completed') missing.push(`recovery job ${id}: ${got.body?.status ?? got.status}`);
        }
      }
      if (ledger.received && !receiver.receipts.some((r) => r.type === 'email.received' && r.status === 200)) {
        missing.push('email.received not delivered');
      }
      if (missing.length && Date.now() - told > 15_000) {
        told = Date.now();
        log(`waiting for ${missing.length}: ${missing.slice(0, 4).join('; ')}`);
      }
      return missing.length === 0 ? true : undefined;
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}: ${missing.slice(0, 12).join('; ')}`);
  }
}

/**
 * Exactly once, by the receiver's count: each (endpoint, event) answered 200 once, every delivery row settled
 * with as many attempts as requests reached its endpoint, every scheduled email sent once.
 */
export async function checkExactlyOnce(clients: Clients, ledger: Ledger, receiver: CountingReceiver) {
  const problems: string[] = [];
  const successes = new Map<string, number>();
  for (const receipt of receiver.receipts) {
    const key = `${receipt.path} ${receipt.type} ${receipt.eventId}`;
    successes.set(key, (successes.get(key) ?? 0) + (receipt.status === 200 ? 1 : 0));
  }
  for (const [key, count] of successes) {
    if (count !== 1) problems.push(`${key}: answered 200 ${count} times (exactly once expected)`);
  }
  const { histories } = await expectedEvents(clients, ledger);
  for (const email of ledger.emails.filter((e) => e.scheduled)) {
    const sent = (histories.get(email.id) ?? []).filter((e) => e.type === 'email.sent').length;
    if (sent !== email.to.length) problems.push(`scheduled email ${email.label}: sent ${sent} times`);
  }
  for (const webhook of ledger.webhooks) {
    const rows = await listDeliveries(clientOf(clients, webhook.mode), webhook.id);
    if (typeof rows === 'string') {
      problems.push(`deliveries of ${webhook.name}: ${rows}`);
      continue;
    }
    for (const row of rows.filter((r) => r.status !== 'succeeded')) {
      problems.push(`delivery ${row.id} (${webhook.name}) ended ${row.status}`);
    }
    const recorded = rows.reduce((sum, row) => sum + row.attempts, 0);
    const requests = receiver.receipts.filter((r) => r.path === webhook.path).length;
    if (recorded !== requests) {
      problems.push(`${webhook.name}: ${recorded} attempts recorded, ${requests} requests received`);
    }
  }
  return problems;
}
