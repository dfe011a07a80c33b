// Lambda concurrency from CDK context (`sendflow:lambdaConcurrency`): the account's quota as the operator read it
// (docs/runbook.md, "First deploy"), and what the API, the authorizer and the public function reserve of it, so a
// backlog of queue work, or a flood of public requests, can never take the concurrency keyed API traffic needs. The queue consumers' bounds (sendflow:maxConcurrency) must
// fit in what the reservations leave; synth refuses a layout that cannot.

import { DEAD_LETTER_CONCURRENCY } from './constructs/delivery-pipeline';
import type { MaxConcurrency } from './consumers';
import { contextObject } from './context-object';

export interface LambdaConcurrency {
  /** The account's concurrent executions quota in the region (Service Quotas L-B99A9384), or this stage's share. */
  readonly accountQuota: number;
  /** Reserved for the API function; 0 reserves nothing (an account whose quota is too small to reserve). */
  readonly api: number;
  /** Reserved for the authorizer; 0 reserves nothing. */
  readonly authorizer: number;
  /**
   * Reserved for the public function, which serves every method without the authorizer (dashboard, one-click
   * unsubscribe, contact confirmation, the API reference, the 404/405 fallbacks): also its ceiling, so a flood of
   * them is throttled there and never takes the API's executions. 0 reserves nothing (and sets no ceiling).
   */
  readonly public: number;
  /**
   * Reserved for the inbound function, on a stage that receives email (sendflow:inbound) only: its reservation is
   * also its ceiling, so a mail flood throttles (Lambda retries throttled async events for up to 6 h) instead of
   * taking the unreserved pool the queue consumers share. 0 reserves nothing.
   */
  readonly inbound: number;
}

/** Lambda's default quota for an established account; new accounts may get far less (the runbook checks). */
export const DEFAULT_LAMBDA_CONCURRENCY: LambdaConcurrency = {
  accountQuota: 1000,
  api: 100,
  authorizer: 50,
  public: 20,
  inbound: 5,
};
/** Lambda refuses a reservation that leaves the account fewer unreserved executions than this. */
export const LAMBDA_MIN_UNRESERVED = 100;
/**
 * Outside sendflow:maxConcurrency, in the unreserved pool too: the reconciler (one invocation a minute), and the
 * delivery worker on the two deliveries DLQs (2 each, Lambda's least: DEAD_LETTER_CONCURRENCY).
 */
export const UNCONFIGURED_CONCURRENCY = 1 + 2 * DEAD_LETTER_CONCURRENCY;
/** Account concurrency alarm: this share of the quota in use pages (throttling starts at the quota). */
export const CONCURRENCY_ALARM_SHARE = 0.8;

/**
 * `sendflow:lambdaConcurrency`: an object (cdk.json) or its JSON (`-c`), any subset of accountQuota, api,
 * authorizer, public, inbound; the others keep DEFAULT_LAMBDA_CONCURRENCY's.
 */
export function parseLambdaConcurrency(raw: unknown, key = 'sendflow:lambdaConcurrency'): LambdaConcurrency {
  if (raw === undefined) return DEFAULT_LAMBDA_CONCURRENCY;
  const value = contextObject(raw, key, '{"accountQuota": 1000}');
  const problems: string[] = [];
  for (const [name, limit] of Object.entries(value)) {
    if (!(name in DEFAULT_LAMBDA_CONCURRENCY))
      problems.push(`unknown setting "${name}" (accountQuota, api, authorizer, public, inbound)`);
    else if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < (name === 'accountQuota' ? 1 : 0)) {
      problems.push(
        `${name} must be a whole number${name === 'accountQuota' ? ' of at least 1' : ''}, got ${JSON.stringify(limit)}`,
      );
    }
  }
  if (problems.length) throw new Error(`Context ${key}: ${problems.join('; ')}`);
  return { ...DEFAULT_LAMBDA_CONCURRENCY, ...(value as Partial<LambdaConcurrency>) };
}

/**
 * Refuses what Lambda would refuse at deploy (reservations leaving fewer than LAMBDA_MIN_UNRESERVED), and queue
 * consumers whose MaximumConcurrency, all together with the scheduled reconciler, exceed what the reservations
 * leave: a backlog would then throttle them against each other instead of being bounded by their limits. The
 * inbound reservation counts only where the stage receives email (`receives`).
 */
export function checkConcurrency(
  concurrency: LambdaConcurrency,
  consumers: MaxConcurrency,
  key = 'sendflow:lambdaConcurrency',
  receives = false,
): void {
  const { accountQuota, api, authorizer } = concurrency;
  const inbound = receives ? concurrency.inbound : 0;
  const reserved = api + authorizer + concurrency.public + inbound;
  const unreserved = accountQuota - reserved;
  if (reserved > 0 && unreserved < LAMBDA_MIN_UNRESERVED) {
    const reservations =
      `${api} (api) + ${authorizer} (authorizer)` +
      (concurrency.public ? ` + ${concurrency.public} (public)` : '') +
      (receives ? ` + ${inbound} (inbound)` : '');
    throw new Error(
      `Context ${key}: reserving ${reservations} of an account quota of ${accountQuota} ` +
        `leaves ${unreserved} unreserved; Lambda needs at least ${LAMBDA_MIN_UNRESERVED}. Ask AWS for a higher ` +
        'quota, or reserve less (0 reserves nothing); docs/runbook.md, "First deploy".',
    );
  }
  const consumersTotal = Object.values(consumers).reduce((sum, limit) => sum + limit, 0) + UNCONFIGURED_CONCURRENCY;
  if (consumersTotal > unreserved) {
    throw new Error(
      `Context ${key}: the queue consumers may run ${consumersTotal} executions at once ` +
        `(sendflow:maxConcurrency ${JSON.stringify(consumers)}, the reconciler and the DLQ consumers), but only ${unreserved} of the ` +
        `account quota of ${accountQuota} are left after the reservations. Lower sendflow:maxConcurrency, reserve ` +
        'less, or ask AWS for a higher quota (docs/runbook.md, "First deploy").',
    );
  }
}

/** The reservation CloudFormation takes: none for 0 (ReservedConcurrentExecutions 0 would stop the function). */
export function reservation(executions: number): number | undefined {
  return executions > 0 ? executions : undefined;
}
