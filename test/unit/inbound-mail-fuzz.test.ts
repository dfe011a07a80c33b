// Hostile SES events at the inbound function's boundary: the fixture with any field replaced by arbitrary JSON
// (or removed), and arbitrary JSON instead of the whole event. Each is either refused by the zod check (a
// ZodError, nothing read, nothing received) or handed on as a well-formed InboundMessage; no other error type,
// no object key outside SES's id alphabet, no unbounded recipient list.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { ZodError } from 'zod';
import { SES_MESSAGE_ID } from '../../lambdas/app/inbound/raw-messages';
import type { InboundMessage } from '../../lambdas/app/inbound/receive-email';
import { createInboundMailHandler } from '../../lambdas/handlers/queue/inbound-mail';

const FIXTURE = JSON.parse(
  readFileSync(new URL('../fixtures/ses-receiving/inbound-lambda-action.json', import.meta.url), 'utf8'),
);
const RAW = new TextEncoder().encode('Subject: x\r\n\r\ny\r\n');
const VERDICTS = ['pass', 'fail', 'gray', 'processing_failed'];
const PATHS = [
  ['Records'],
  ['Records', 0],
  ['Records', 0, 'eventSource'],
  ['Records', 0, 'ses'],
  ['Records', 0, 'ses', 'mail'],
  ['Records', 0, 'ses', 'mail', 'messageId'],
  ['Records', 0, 'ses', 'mail', 'source'],
  ['Records', 0, 'ses', 'receipt'],
  ['Records', 0, 'ses', 'receipt', 'timestamp'],
  ['Records', 0, 'ses', 'receipt', 'recipients'],
  ['Records', 0, 'ses', 'receipt', 'recipients', 0],
  ['Records', 0, 'ses', 'receipt', 'spamVerdict'],
  ['Records', 0, 'ses', 'receipt', 'spamVerdict', 'status'],
  ['Records', 0, 'ses', 'receipt', 'dmarcVerdict', 'status'],
] as const;

/** The fixture with the value at `path` replaced (or removed when `value` is undefined). */
function mutate(path: readonly (string | number)[], value: unknown): unknown {
  const event = structuredClone(FIXTURE);
  let node = event;
  for (const key of path.slice(0, -1)) node = node?.[key];
  if (node && typeof node === 'object') {
    const last = path[path.length - 1] as string | number;
    if (value === undefined) delete node[last];
    else node[last] = value;
  }
  return event;
}

async function run(event: unknown) {
  const reads: string[] = [];
  const received: InboundMessage[] = [];
  const handler = createInboundMailHandler({
    source: {
      read: async (id) => {
        reads.push(id);
        return RAW;
      },
      discard: async () => {},
    },
    receive: async (message) => {
      received.push(message);
      return { stored: [{ accountId: 'acct_1', emailId: 'rcv_1', created: true, status: 'received' }], dropped: [] };
    },
    logger: { info: () => {}, warn: () => {} },
  });
  let error: unknown;
  try {
    await handler(event);
  } catch (caught) {
    error = caught;
  }
  return { reads, received, error };
}

function expectRefusedOrWellFormed(outcome: Awaited<ReturnType<typeof run>>) {
  if (outcome.error !== undefined) {
    expect(outcome.error).toBeInstanceOf(ZodError);
    expect(outcome.reads).toEqual([]);
    expect(outcome.received).toEqual([]);
    return;
  }
  for (const id of outcome.reads) expect(id).toMatch(SES_MESSAGE_ID);
  for (const message of outcome.received) {
    expect(message.raw).toBe(RAW);
    expect(message.sourceId).toMatch(SES_MESSAGE_ID);
    expect(typeof message.mailFrom).toBe('string');
    expect(message.recipients.length).toBeGreaterThan(0);
    expect(message.recipients.length).toBeLessThanOrEqual(1000);
    for (const address of message.recipients) expect(address).toContain('@');
    for (const verdict of Object.values(message.verdicts ?? {})) expect(VERDICTS).toContain(verdict);
    expect(new Date(message.receivedAt).toISOString()).toBe(message.receivedAt);
  }
}

it('refuses or hands on well-formed: the fixture with one field replaced by arbitrary JSON or removed', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...PATHS),
      fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }),
      async (path, value) => expectRefusedOrWellFormed(await run(mutate(path, value))),
    ),
    { numRuns: 400 },
  );
});

it('refuses arbitrary JSON in place of the event with a ZodError', async () => {
  await fc.assert(
    fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (event) => {
      const outcome = await run(event);
      expect(outcome.error).toBeInstanceOf(ZodError);
      expect(outcome.reads).toEqual([]);
    }),
    { numRuns: 200 },
  );
});

it('refuses a recipient list past 1,000 and takes one of exactly 1,000', async () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => `r${i}@acme.example`);
  expect((await run(mutate(PATHS[9], many(1001)))).error).toBeInstanceOf(ZodError);
  expect((await run(mutate(PATHS[9], many(1000)))).received[0]?.recipients).toHaveLength(1000);
});
