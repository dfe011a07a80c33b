// The sending rate kept in this process's memory (domain/email/send-rate.ts): one bucket per process, so on AWS
// each send worker invocation (one at a time per container) paces at its share of the account's rate, and the
// local runtime, one process, at the whole rate it is given.
import type { SendPacer } from '../../app/emails/ports';
import type { Clock } from '../../app/ports';
import { fullBucket, rateRule, reserve, type SendBucket, type SendRateRule } from '../../domain/email/send-rate';

export interface TokenBucketPacerOptions {
  /** Copies per second (SF_SES_MAX_SEND_RATE). */
  readonly perSecond: number;
  readonly clock: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
}

export class TokenBucketPacer implements SendPacer {
  private readonly rule: SendRateRule;
  private readonly clock: Clock;
  private readonly sleep: (ms: number) => Promise<void>;
  private bucket: SendBucket;

  constructor(options: TokenBucketPacerOptions) {
    this.rule = rateRule(options.perSecond);
    this.clock = options.clock;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.bucket = fullBucket(this.rule, this.clock.now());
  }

  async take(notAfter?: number): Promise<boolean> {
    const now = this.clock.now();
    // Reserved before any wait, so concurrent copies queue in the order they asked.
    const taken = reserve(this.bucket, this.rule, now, notAfter === undefined ? undefined : notAfter - now);
    if (!taken) return false;
    this.bucket = taken.bucket;
    if (taken.waitMs > 0) await this.sleep(taken.waitMs);
    return true;
  }
}
