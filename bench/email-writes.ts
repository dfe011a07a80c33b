// `npm run bench:email-writes`: every DynamoDB write one email makes, as bench:cost bills it, in order: table,
// key, kind, units and each index entry it moves; and its S3 requests. BENCH_SIZE_KB (2, 30 or 200; default 2), BENCH_RECIPIENTS
// (1, 10 or 50; default 1), BENCH_EMAILS (default 3: the first lists every write, the rest are averaged in).
import { readDeployment } from './cost/deployment';
import { startHarness } from './cost/harness';
import type { PricedWrite } from './cost/meter';
import { runEmails } from './cost/workloads';
import { positiveInt, printTable } from './report';

const sizeKb = positiveInt('BENCH_SIZE_KB', 2) as 2 | 30 | 200;
const recipients = positiveInt('BENCH_RECIPIENTS', 1) as 1 | 10 | 50;
const emails = positiveInt('BENCH_EMAILS', 3);

/** Ids become their kind, so one email's writes read the same as another's. */
const shape = (key: string) =>
  key.replace(/\b(email|evt|batch|acct)_[0-9a-z]+/gi, '$1_…').replace(/#\d{9,}/g, '#<window>');

const h = await startHarness(readDeployment());
try {
  // One email first, so the rest are steady state (the tenant's first request warms nothing billable, but be safe).
  const sample = await runEmails(h, { kind: 'emails', sizeKb, recipients, webhooks: 0, batching: 'one' }, emails);
  const writes: PricedWrite[] = sample.usage.dynamo.writes;
  const total = (w: PricedWrite) => w.units + w.indexes.reduce((a, i) => a + i.units, 0);
  const grouped = new Map<string, { count: number; units: number; example: PricedWrite }>();
  for (const w of writes) {
    const id = `${w.table}|${shape(w.key)}|${w.kind}|${w.indexes.map((i) => `${i.name} ${i.kind}`).join(', ')}`;
    const g = grouped.get(id) ?? { count: 0, units: 0, example: w };
    g.count += 1;
    g.units += total(w);
    grouped.set(id, g);
  }
  console.log(`\nDynamoDB writes per email, ${sizeKb} KB x ${recipients} recipient(s), averaged over ${emails} emails`);
  printTable(
    ['table', 'key', 'write', 'index entries', 'writes/email', 'WRU/email'],
    [...grouped.values()].map(({ count, units, example: w }) => [
      w.table,
      shape(w.key).slice(0, 48),
      w.kind,
      w.indexes.map((i) => `${i.name} ${i.kind} ${i.units}`).join(', ') || '-',
      (count / emails).toFixed(2),
      (units / emails).toFixed(2),
    ]),
  );
  const all = writes.reduce((a, w) => a + total(w), 0);
  console.log(`total: ${(all / emails).toFixed(2)} WRU per email (${writes.length / emails} writes)`);
  const { put, get } = sample.usage.s3;
  console.log(`S3 (bodies over the inline limit): ${put / emails} PUT and ${get / emails} GET per email`);
} finally {
  h.receiver.stop();
  await h.runtime.stop();
}
