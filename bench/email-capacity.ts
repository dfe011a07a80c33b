// What DynamoDB bills, by AWS's rules, for one email sent through the real API, send worker and dispatcher of the
// local runtime (dynalite): an email of 2 / 30 / 200 KB to 1 / 10 / 50 recipients, accepted (POST /v1/emails),
// sent (every recipient claimed and settled) and its simulated events recorded. Counts the email data model's
// tables (emails, emailParts, emailEvents) apart from the rest (keys, rate limits, idempotency, suppressions).
// The last line is one JSON object of the figures. `npm run bench:email-capacity`.
import { randomBytes } from 'node:crypto';
import { DynamoEmailBodyStore } from '../lambdas/adapters/dynamodb/email-bodies';
import { noUsagePlans } from '../lambdas/adapters/local/usage-plans';
import { createAccount, createAccountKey } from '../lambdas/app/accounts';
import { documentClient } from '../lambdas/runtime/document-client';
import { localDynamoClient } from '../lambdas/runtime/local/dynamo';
import { startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { createRepositories } from '../lambdas/runtime/repositories';
import { CapacityMeter, type TableUnits } from './capacity-meter';
import { benchConfig, printTable } from './report';

const SIZES_KB = [2, 30, 200];
const RECIPIENTS = [1, 10, 50];
/** The email data model's tables (emailParts exists only from the split on). */
const EMAIL_TABLES = ['emails', 'emailParts', 'emailEvents'];
/** On-demand prices, us-east-1 (2024-11 price cut): per million write and read request units. */
const USD_PER_MILLION = { wru: 0.625, rru: 0.125 };

const config = benchConfig({ SF_DATA_DIR: ':memory:', SF_SIMULATOR_STEP_SECONDS: '0', SF_IP_RATE_LIMIT: '100000' });
const meter = new CapacityMeter(config.tables);
const runtime = await startLocalRuntime(config, {
  instrument: (client) => meter.attach(client),
  // As the AWS functions store bodies today: the `body` item of emailParts (locally they are files).
  emailBodies: (client) => new DynamoEmailBodyStore(documentClient(client), config.tables.emailParts),
});
const aside = localDynamoClient(runtime.dynamoEndpoint);
meter.reader = documentClient(aside);
const admin = {
  ...createRepositories(aside, config.tables),
  usagePlans: noUsagePlans,
  authorizerCache: runtime.services.authorizerCache,
  clock: { now: () => Date.now() },
  random: randomBytes,
};
const account = await createAccount(admin, 'scale');
const { secret } = await createAccountKey(admin, { accountId: account.id, mode: 'test' });

/** The size of an html body: `kb` KB of text in a paragraph. */
const html = (kb: number) =>
  `<p>${'Lorem ipsum dolor sit amet, '.repeat(Math.ceil((kb * 1024) / 28)).slice(0, kb * 1024 - 7)}</p>`;

async function sendOne(kb: number, recipients: number) {
  meter.reset();
  const response = await fetch(`${runtime.url}/emails`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      from: 'Acme <news@acme.example>',
      to: Array.from({ length: recipients }, (_, i) => `reader${i}@example.com`),
      subject: 'The news',
      html: html(kb),
      headers: { 'X-Entity-Ref-ID': 'bench' },
    }),
  });
  if (response.status !== 200) throw new Error(`POST /v1/emails answered ${response.status}: ${await response.text()}`);
  await runtime.queues.sends.settled();
  await runtime.queues.events.idle();
  await runtime.queues.deliveries.idle();
  return meter.snapshot();
}

const sum = (units: Readonly<Record<string, TableUnits>>, pick: (table: string) => boolean) =>
  Object.entries(units)
    .filter(([table]) => pick(table))
    .reduce((acc, [, u]) => ({ wru: acc.wru + u.wru, rru: acc.rru + u.rru }), { wru: 0, rru: 0 });

const rows: string[][] = [];
const figures: Record<string, unknown> = {};
try {
  await sendOne(2, 1); // warm-up: first-use writes (quota counters, ...) are not an email's
  for (const kb of SIZES_KB) {
    for (const recipients of RECIPIENTS) {
      const units = await sendOne(kb, recipients);
      const email = sum(units, (table) => EMAIL_TABLES.includes(table));
      const other = sum(units, (table) => !EMAIL_TABLES.includes(table));
      const usdPerThousand = ((email.wru * USD_PER_MILLION.wru + email.rru * USD_PER_MILLION.rru) / 1e6) * 1000;
      const perTable = EMAIL_TABLES.map((table) => units[table] ?? { wru: 0, rru: 0 });
      rows.push([
        `${kb} KB × ${recipients}`,
        String(email.wru),
        String(email.rru),
        ...perTable.map((u) => `${u.wru}/${u.rru}`),
        `${other.wru}/${other.rru}`,
        usdPerThousand.toFixed(4),
      ]);
      figures[`${kb}kb_${recipients}rcpt`] = {
        email_wru: email.wru,
        email_rru: email.rru,
        other_wru: other.wru,
        other_rru: other.rru,
        usd_per_thousand_emails: Number(usdPerThousand.toFixed(5)),
      };
    }
  }
} finally {
  aside.destroy();
  await runtime.stop();
}
printTable(
  ['email', 'WRU', 'RRU', ...EMAIL_TABLES.map((t) => `${t} W/R`), 'other W/R', '$/1000 emails (DynamoDB)'],
  rows,
);
console.log(JSON.stringify(figures));
