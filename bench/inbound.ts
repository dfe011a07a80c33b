// `npm run bench:inbound`: messages through the local runtime's SMTP server into storage. N messages (each a
// multipart with text, HTML and one attachment of SIZE_KB) on C connections: accepted per second (to the 250:
// spooled and fsynced), stored per second (until the spool is empty), and DynamoDB calls per message by
// operation and table (the RCPT check, the received email's item and its outbox relay). Data on disk (a temp
// directory), so the spool's fsyncs are real. BENCH_INBOUND_MESSAGES, BENCH_INBOUND_CONNECTIONS, BENCH_INBOUND_KB.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CallCounts, countCalls } from '../lambdas/adapters/dynamodb/call-counter';
import { noUsagePlans } from '../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../lambdas/app/accounts';
import { localDynamoClient } from '../lambdas/runtime/local/dynamo';
import { startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { createRepositories } from '../lambdas/runtime/repositories';
import { RawSmtp } from '../test/support/smtp-client';
import { benchConfig, positiveInt, printTable } from './report';

const MESSAGES = positiveInt('BENCH_INBOUND_MESSAGES', 200);
const CONNECTIONS = positiveInt('BENCH_INBOUND_CONNECTIONS', 4);
const SIZE_KB = positiveInt('BENCH_INBOUND_KB', 20);
const DOMAIN = 'bench.acme.example';

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sendflow-bench-inbound-'));
  const config = benchConfig({
    SF_DATA_DIR: dir,
    SF_DOMAIN_VERIFY_SECONDS: '0',
    SF_RECONCILE_INTERVAL_SECONDS: '3600',
  });
  let counts: CallCounts | undefined;
  const runtime = await startLocalRuntime(config, { instrument: (client) => (counts = countCalls(client)) });
  try {
    const key = await liveKey(runtime.dynamoEndpoint, config.tables);
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const domain = (await (
      await fetch(`${runtime.url}/domains`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: DOMAIN, capabilities: { receiving: 'enabled' } }),
      })
    ).json()) as { id: string };
    await fetch(`${runtime.url}/domains/${domain.id}/verify`, { method: 'POST', headers });
    const attachment = randomBytes(SIZE_KB * 1024)
      .toString('base64')
      .replace(/.{76}/g, '$&\r\n');
    const message = (i: number) =>
      [
        `Subject: bench ${i}`,
        'From: Bench <bench@sender.example>',
        `To: inbox@${DOMAIN}`,
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b',
        'Content-Type: text/plain',
        '',
        `message ${i}`,
        '--b',
        'Content-Type: text/html',
        '',
        `<p>message ${i}</p>`,
        '--b',
        'Content-Type: application/octet-stream; name="blob.bin"',
        'Content-Disposition: attachment; filename="blob.bin"',
        'Content-Transfer-Encoding: base64',
        '',
        attachment,
        '--b--',
        '',
      ].join('\r\n');
    counts?.reset();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        const { client } = await RawSmtp.open(runtime.smtpPort);
        for (let i = next++; i < MESSAGES; i = next++) {
          const sent = await client.send('bench@sender.example', [`inbox@${DOMAIN}`], message(i));
          if (sent.data.code !== 250) throw new Error(`message ${i}: ${sent.data.code} ${sent.data.text}`);
        }
        client.close();
      }),
    );
    const accepted = performance.now() - started;
    await runtime.inbound.idle();
    const stored = performance.now() - started;
    if (runtime.inbound.pending() !== 0) throw new Error(`${runtime.inbound.pending()} messages left in the spool`);
    const calls = counts?.snapshot({ byTable: true }) ?? {};
    console.log(
      `${MESSAGES} messages of ~${SIZE_KB} KB on ${CONNECTIONS} connections (data on disk: ${config.dataDir})\n`,
    );
    printTable(
      ['measure', 'value'],
      [
        ['accepted (250) per second', (MESSAGES / (accepted / 1000)).toFixed(1)],
        ['stored per second (end to end)', (MESSAGES / (stored / 1000)).toFixed(1)],
        ['DynamoDB calls per message', ((counts?.total() ?? 0) / MESSAGES).toFixed(2)],
      ],
    );
    console.log('');
    printTable(
      ['DynamoDB call (operation table)', 'per message'],
      Object.entries(calls).map(([name, n]) => [name, (n / MESSAGES).toFixed(2)]),
    );
  } finally {
    await runtime.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A live key (receiving is live-mode only), made through a client of our own (not counted). */
async function liveKey(endpoint: string, tables: Parameters<typeof createRepositories>[1]): Promise<string> {
  const client = localDynamoClient(endpoint);
  try {
    const deps = {
      ...createRepositories(client, tables),
      usagePlans: noUsagePlans,
      authorizerCache: { flush: async () => {} },
      clock: { now: () => Date.now() },
      random: randomBytes,
    };
    const account = await createAccount(deps, 'scale');
    return (await createAccountKey(deps, { accountId: account.id, mode: 'live', name: 'bench' })).secret;
  } finally {
    client.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
