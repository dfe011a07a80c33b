// `node --import tsx bench/signature-check.ts`: CPU time of one signature check at the request's ceilings (a
// 256 KB body, BENCH_SIGNATURES listed signatures, default 4,096, none of them matching, so every check runs
// to the end), measured with process.cpuUsage over BENCH_RUNS checks (default 5). The domain function alone:
// the HTTP boundary refuses more than MAX_CHECKED_SIGNATURES before it is reached (docs/benchmarks.md).
import { randomBytes } from 'node:crypto';
import { checkSignature } from '../lambdas/domain/webhooks/signature-check';
import { positiveInt } from './report';

const SIGNATURES = positiveInt('BENCH_SIGNATURES', 4096);
const RUNS = positiveInt('BENCH_RUNS', 5);
const secret = (fill: number) => `whsec_${Buffer.alloc(32, fill).toString('base64')}`;
const nowMs = Date.now();
// JSON, so the checker also tries the compact form; and a stored body that differs, so it tries that too.
const body = JSON.stringify({ type: 'email.delivered', data: { text: 'x'.repeat(256 * 1024 - 64) } }, null, 1);
const sentBody = body.replace('email.delivered', 'email.bounced');
const given = Array.from({ length: SIGNATURES }, () => `v1,${randomBytes(32).toString('base64')}`).join(' ');
const headers = {
  'webhook-id': 'evt_bench',
  'webhook-timestamp': String(Math.floor(nowMs / 1000)),
  'webhook-signature': given,
};

const samples: number[] = [];
for (let run = 0; run < RUNS; run++) {
  const start = process.cpuUsage();
  const result = checkSignature({
    headers,
    body,
    sentBody,
    secrets: [secret(1), secret(2)],
    retiredSecret: secret(3),
    nowMs,
  });
  const used = process.cpuUsage(start);
  if (result.valid) throw new Error('a random signature matched');
  samples.push((used.user + used.system) / 1000);
}
samples.sort((a, b) => a - b);
const median = samples[Math.floor(samples.length / 2)] ?? 0;
console.log(
  JSON.stringify({
    signatures: SIGNATURES,
    body_bytes: Buffer.byteLength(body),
    runs: RUNS,
    cpu_ms: { median: Math.round(median), min: Math.round(samples[0] ?? 0), max: Math.round(samples.at(-1) ?? 0) },
  }),
);
