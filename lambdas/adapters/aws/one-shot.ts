// One-shot EventBridge Scheduler schedules (DESIGN §4, §6): at a time, put one message on an SQS queue, then
// delete the schedule. Scheduler fires within its minute, so callers send delays under a minute through SQS
// DelaySeconds instead. The name doubles as the client token: asking twice for the same schedule (a retried
// job, the reconciler) is refused by Scheduler and counts as done.
import { createHash, randomUUID } from 'node:crypto';
import {
  ConflictException,
  CreateScheduleCommand,
  ResourceNotFoundException,
  type SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';

/** Below this, Scheduler's one-minute precision is worse than the delay itself. */
export const SCHEDULER_MIN_DELAY_SECONDS = 60;

/**
 * Scheduler's own retries when it cannot reach the queue: a handful, within an hour. After that the event
 * goes to the schedule's DLQ (alarmed), and the reconciler re-queues what is overdue in any case.
 */
export const SCHEDULE_RETRY_POLICY = { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 } as const;

/** Schedule names: 1–64 of [0-9a-zA-Z-_.]; client tokens: 1–64 of [a-zA-Z0-9-_]. A safe name obeys both. */
const SAFE_NAME = /^[0-9A-Za-z_-]{1,64}$/;

/** `name` when it is a safe schedule name, else `prefix` + a stable digest of it (+ `suffix`), ≤ 64 chars. */
export function safeScheduleName(name: string, prefix: string, suffix = ''): string {
  if (SAFE_NAME.test(name)) return name;
  const digest = createHash('sha256').update(name).digest('hex');
  return `${prefix}${digest}`.slice(0, 64 - suffix.length) + suffix;
}

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC, rounded up to the whole second so nothing fires early. */
export function atExpression(epochMs: number): string {
  const whole = Math.ceil(epochMs / 1000) * 1000;
  return `at(${new Date(whole).toISOString().slice(0, 19)})`;
}

/** Where a group's schedules deliver: the queue, the role Scheduler assumes, the DLQ for what it cannot. */
export interface OneShotTarget {
  readonly scheduler: SchedulerClient;
  readonly groupName: string;
  readonly queueArn: string;
  readonly roleArn: string;
  readonly dlqArn: string;
}

/** One schedule: its name and what it does at its time. */
export interface OneShot {
  name: string;
  description: string;
  atMs: number;
  input: string;
  /** Defaults to the name; a schedule made again under its name (rescheduled) needs a token of its own. */
  clientToken?: string;
}

/** The whole definition, as CreateSchedule and UpdateSchedule both take it (Update replaces every field). */
function definition(target: OneShotTarget, schedule: OneShot) {
  return {
    Name: schedule.name,
    GroupName: target.groupName,
    Description: schedule.description,
    ScheduleExpression: atExpression(schedule.atMs),
    ScheduleExpressionTimezone: 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' as const },
    ActionAfterCompletion: 'DELETE' as const,
    Target: {
      Arn: target.queueArn,
      RoleArn: target.roleArn,
      Input: schedule.input,
      DeadLetterConfig: { Arn: target.dlqArn },
      RetryPolicy: { ...SCHEDULE_RETRY_POLICY },
    },
  };
}

export async function createOneShot(target: OneShotTarget, schedule: OneShot): Promise<void> {
  try {
    await target.scheduler.send(
      new CreateScheduleCommand({
        ...definition(target, schedule),
        ClientToken: schedule.clientToken ?? schedule.name,
      }),
    );
  } catch (error) {
    // The schedule exists: asked for before. The first one stands.
    if (error instanceof ConflictException) return;
    throw error;
  }
}

/**
 * Moves a schedule to a new time (and input) in place: UpdateSchedule, whose client token the SDK makes fresh
 * for each call, so a move back to an earlier time, or a retried move, is never taken for one already answered.
 * A schedule that is gone (it fired and deleted itself, or never existed) is created, with a fresh token too;
 * one created meanwhile by a concurrent move (ConflictException) is updated to this time after all.
 */
export async function moveOneShot(target: OneShotTarget, schedule: Omit<OneShot, 'clientToken'>): Promise<void> {
  const update = () => target.scheduler.send(new UpdateScheduleCommand(definition(target, schedule)));
  try {
    await update();
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  try {
    await target.scheduler.send(
      new CreateScheduleCommand({ ...definition(target, schedule), ClientToken: randomUUID() }),
    );
  } catch (error) {
    if (!(error instanceof ConflictException)) throw error;
    await update();
  }
}
