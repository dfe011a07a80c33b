// bench:scale's model of EventBridge Scheduler, as the real AwsRetryScheduler calls it: CreateSchedule of a
// one-shot at() schedule whose SQS target receives the job once, within the minute after its time (Scheduler's
// one-minute precision: the Scheduler User Guide, "Schedule types"), with the schedule's name refused a second time
// (ConflictException). It counts the calls made in each second and the schedules fired in each second, to compare
// with the account's default quotas (research/aws.md §1: CreateSchedule 1,000 a second on the older quota pages,
// 5,000 on the current English one; about 1,000 schedules fired a second). Left out: Scheduler's own retries and
// DLQ (its SQS target never fails here), the account's schedule count quota (10 million), UpdateSchedule.
import { ConflictException, CreateScheduleCommand } from '@aws-sdk/client-scheduler';
import type { SimQueue } from './sqs';
import type { VirtualTime } from './virtual-time';

export class SimScheduler {
  readonly created = new Map<number, number>();
  readonly fired = new Map<number, number>();
  calls = 0;
  pending = 0;
  private readonly names = new Set<string>();
  private seed = 1;

  constructor(
    private readonly queuesByArn: ReadonlyMap<string, SimQueue>,
    private readonly time: VirtualTime,
    private readonly latencyMs: number,
  ) {}

  /** The busiest second's CreateSchedule calls, and schedules fired. */
  get maxCallsPerSecond(): number {
    return Math.max(0, ...this.created.values());
  }

  /** The busiest 10 seconds' CreateSchedule calls, a second (bursts smoothed as a token bucket would). */
  get maxCallsPerSecondOver10s(): number {
    let best = 0;
    for (const second of this.created.keys()) {
      let sum = 0;
      for (let s = second; s < second + 10; s++) sum += this.created.get(s) ?? 0;
      best = Math.max(best, sum / 10);
    }
    return best;
  }

  get maxFiredPerSecond(): number {
    return Math.max(0, ...this.fired.values());
  }

  async send(command: unknown): Promise<Record<string, unknown>> {
    if (!(command instanceof CreateScheduleCommand)) {
      throw new Error(`bench:scale's Scheduler does not model ${(command as object).constructor.name}`);
    }
    await this.time.sleep(this.latencyMs);
    const second = Math.floor(this.time.now() / 1000);
    this.created.set(second, (this.created.get(second) ?? 0) + 1);
    this.calls += 1;
    const input = command.input;
    const name = `${input.GroupName}/${input.Name}`;
    if (this.names.has(name)) throw new ConflictException({ Message: 'exists', message: 'exists', $metadata: {} });
    this.names.add(name);
    const match = /^at\((.+)\)$/.exec(String(input.ScheduleExpression));
    if (!match) throw new Error(`not a one-shot expression: ${input.ScheduleExpression}`);
    const at = Date.parse(`${match[1]}Z`);
    const queue = this.queuesByArn.get(String(input.Target?.Arn));
    if (!queue) throw new Error(`no simulated queue ${input.Target?.Arn}`);
    const body = String(input.Target?.Input);
    this.pending += 1;
    // Within the minute after its time (a spread, deterministic per schedule).
    this.seed = (this.seed * 48_271) % 2_147_483_647;
    this.time.at(at + (this.seed % 60_000), () => {
      this.pending -= 1;
      const fired = Math.floor(this.time.now() / 1000);
      this.fired.set(fired, (this.fired.get(fired) ?? 0) + 1);
      this.names.delete(name);
      queue.counts.sendRequests += 1;
      queue.put([{ body, delaySeconds: 0 }]);
    });
    return { ScheduleArn: `arn:aws:scheduler:sim:000000000000:schedule/${name}` };
  }
}
