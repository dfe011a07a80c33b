// BENCH_COST_ONLY=transformations (issue 32): what a webhook transformation adds to each attempt, measured: the
// sandbox's time per run (a fresh QuickJS runtime and context, the source, the call, the checks: what the delivery
// function spends before its request) for a typical handler (a Teams card from an email event) and a heavier one,
// priced as the delivery function's Lambda GB-seconds (its memory and architecture from the synthesized template).
// The module's one load per container is reported apart: a cold start pays it once.
import { QuickJsTransformRunner } from '../../lambdas/adapters/sandbox/quickjs-sandbox';
import type { Webhook } from '../../lambdas/app/webhooks/ports';
import { prepareAttempt } from '../../lambdas/app/webhooks/transform';
import type { Deployment } from './deployment';
import { PRICES } from './prices';

const CARD = `function handler(webhook) {
  const d = webhook.payload.data;
  webhook.payload = {
    type: 'message',
    attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', content: {
      type: 'AdaptiveCard', version: '1.4',
      body: [{ type: 'TextBlock', text: webhook.eventType + ': ' + d.subject, weight: 'Bolder' },
             { type: 'FactSet', facts: [{ title: 'To', value: [].concat(d.to).join(', ') }, { title: 'Email', value: d.email_id }] }],
    } }],
  };
  webhook.headers['X-Source'] = 'sendflow';
  return webhook;
}`;
const HEAVY = `function handler(webhook) {
  let h = 0;
  for (let i = 0; i < 20000; i++) h = (h * 31 + i) % 1000003;
  webhook.payload = { ...webhook.payload, checksum: h, keys: Object.keys(webhook.payload.data).sort() };
  return webhook;
}`;

const PAYLOAD = JSON.stringify({
  type: 'email.delivered',
  created_at: '2026-12-08T01:00:00.000Z',
  data: {
    email_id: 'em_01jdq6x5r7m8v0a2b3c4d5e6f7',
    from: 'Acme <news@acme.test>',
    to: ['someone@example.com'],
    subject: 'Your order has shipped',
    created_at: '2026-12-08T00:59:58.000Z',
    tags: { plan: 'pro' },
  },
});

const webhook = (transformation: string): Webhook => ({
  accountId: 'acc_bench',
  mode: 'test',
  id: 'wh_bench',
  url: 'https://hooks.example.com/in',
  events: ['email.delivered'],
  format: 'standard',
  secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}`,
  active: true,
  createdAt: '2026-12-08T00:00:00.000Z',
  updatedAt: '2026-12-08T00:00:00.000Z',
  transformation,
});

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const round = (n: number, digits = 3) => Number(n.toFixed(digits));

export async function reportTransformations(deployment: Deployment, runs = 2000): Promise<void> {
  const runner = new QuickJsTransformRunner();
  const loadStarted = performance.now();
  await runner.warm();
  const loadMs = performance.now() - loadStarted;
  const delivery = {
    format: 'standard' as const,
    eventId: 'evt_bench',
    event: 'email.delivered',
    payload: PAYLOAD,
    createdAt: 0,
  };
  const fn = deployment.functions.get('sendflow-delivery');
  const memoryMb = fn?.memoryMb ?? 512;
  const architecture = fn?.architecture ?? 'arm64';
  const figures: Record<string, unknown> = {
    module_load_ms: round(loadMs, 1),
    delivery_memory_mb: memoryMb,
    architecture,
  };
  for (const [name, source] of [
    ['teams_card', CARD],
    ['heavy', HEAVY],
  ] as const) {
    const hook = webhook(source);
    // With the signing and the checks, as the attempt path does it; the plain path's own cost (signing) subtracted.
    for (let i = 0; i < 50; i++) await prepareAttempt({ transforms: runner }, hook, delivery, Date.now());
    const times: number[] = [];
    const cpu: number[] = [];
    const deps = { transforms: runner, transformRan: (run: { cpuMs: number }) => void cpu.push(run.cpuMs) };
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      const prepared = await prepareAttempt(deps, hook, delivery, Date.now());
      times.push(performance.now() - started);
      if (prepared.kind !== 'send') throw new Error(`bench transformation ${name} failed: ${JSON.stringify(prepared)}`);
    }
    const plainTimes: number[] = [];
    const plain = webhook('');
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      await prepareAttempt({}, { ...plain, transformation: null }, delivery, Date.now());
      plainTimes.push(performance.now() - started);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const added = Math.max(0, mean(times) - mean(plainTimes));
    times.sort((a, b) => a - b);
    // Lambda bills an invocation's duration (rounded up to the ms once per invocation, billing.ts gbSeconds): the
    // added time lengthens the attempt's invocation, so it is priced as that much more duration, unrounded.
    const gbSecondsPerMillion = (memoryMb / 1024) * (added / 1000) * 1e6;
    figures[name] = {
      sandbox_cpu_mean_ms: round(mean(cpu)),
      mean_ms: round(mean(times)),
      p50_ms: round(percentile(times, 50)),
      p99_ms: round(percentile(times, 99)),
      added_ms_per_attempt: round(added),
      gb_seconds_per_million_attempts: round(gbSecondsPerMillion, 1),
      usd_per_million_attempts: round(gbSecondsPerMillion * PRICES.lambda.gbSecond[architecture], 4),
    };
  }
  console.log(JSON.stringify(figures));
}
