// Consumer limits from CDK context: each SQS event source's MaximumConcurrency (`sendflow:maxConcurrency`) and
// the SES account's sending rate (`sendflow:sesMaxSendRate`), which EmailPipeline splits over the send worker's
// invocations (sendRateShare).

import { queues } from '../lambdas/manifest';
import { PROVIDER_EVENTS_QUEUE } from './constructs/email-pipeline';
import { contextObject } from './context-object';

/**
 * The SQS consumers whose concurrency is bounded: the manifest's queues, the shared lane's bypass (the deliveries
 * queue's settings: DELIVERIES_BYPASS) and the provider-events queue.
 */
export type Consumer = keyof typeof queues | 'deliveriesBypass' | 'providerEvents';
export type MaxConcurrency = Readonly<Record<Consumer, number>>;

/** The manifest's values (and PROVIDER_EVENTS_QUEUE's): what a consumer not named in context gets. */
export const DEFAULT_MAX_CONCURRENCY: MaxConcurrency = {
  events: queues.events.maxConcurrency,
  deliveries: queues.deliveries.maxConcurrency,
  deliveriesBypass: queues.deliveries.maxConcurrency,
  slowDeliveries: queues.slowDeliveries.maxConcurrency,
  sends: queues.sends.maxConcurrency,
  providerEvents: PROVIDER_EVENTS_QUEUE.maxConcurrency,
};
/** Lambda's bounds on an SQS event source's MaximumConcurrency. */
export const MAX_CONCURRENCY_RANGE = { min: 2, max: 1000 } as const;

/**
 * SES's usual starting sending rate of an account out of the sandbox, emails per second (research/email.md;
 * the sandbox allows 1). Raise it here once AWS raises the account's quota.
 */
export const DEFAULT_SES_MAX_SEND_RATE = 14;
/** The range accepted for `sendflow:sesMaxSendRate`: SES's lowest rate (the sandbox's) up to a generous ceiling. */
export const SES_MAX_SEND_RATE_RANGE = { min: 1, max: 10_000 } as const;

/**
 * `sendflow:maxConcurrency`: an object (cdk.json) or its JSON (`-c key='{"deliveries":20}'`), with any subset of
 * the consumers; the others keep their defaults. Integers from 2 to 1000 (Lambda's range); an unknown key is an
 * error rather than a silently ignored typo.
 */
export function parseMaxConcurrency(raw: unknown, key = 'sendflow:maxConcurrency'): MaxConcurrency {
  if (raw === undefined) return DEFAULT_MAX_CONCURRENCY;
  const value = contextObject(raw, key, '{"deliveries": 20}');
  const known = Object.keys(DEFAULT_MAX_CONCURRENCY);
  const problems: string[] = [];
  for (const [name, limit] of Object.entries(value)) {
    if (!known.includes(name)) problems.push(`unknown consumer "${name}" (known: ${known.join(', ')})`);
    else if (!isIntegerIn(limit, MAX_CONCURRENCY_RANGE)) {
      const { min, max } = MAX_CONCURRENCY_RANGE;
      problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(limit)}`);
    }
  }
  if (problems.length) throw new Error(`Context ${key}: ${problems.join('; ')}`);
  return { ...DEFAULT_MAX_CONCURRENCY, ...(value as Partial<MaxConcurrency>) };
}

/** `sendflow:sesMaxSendRate`: emails per second, a number (or its string, from `-c`) from 1 to 10,000. */
export function parseSesMaxSendRate(raw: unknown, key = 'sendflow:sesMaxSendRate'): number {
  if (raw === undefined) return DEFAULT_SES_MAX_SEND_RATE;
  const rate = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  const { min, max } = SES_MAX_SEND_RATE_RANGE;
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < min || rate > max) {
    throw new Error(`Context ${key} must be a number of emails per second from ${min} to ${max}, got ${String(raw)}`);
  }
  return rate;
}

function isIntegerIn(value: unknown, range: { min: number; max: number }): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= range.min && value <= range.max;
}
