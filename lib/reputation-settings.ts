// Sending reputation per stage, from CDK context (`sendflow:reputation`): the rolling window, the minimum volume
// and the warning and pause thresholds every function judges with (SF_REPUTATION_* in their environment), whether
// test mode is judged, and the expand/contract switch of the account.reputation_warning event. A stage without an
// entry takes the defaults (docs/sending.md, "Sending reputation"; docs/deploy-and-operate.md).

import * as z from 'zod';
import {
  DEFAULT_REPUTATION_POLICY,
  MAX_WINDOW_DAYS,
  policyProblems,
  type ReputationPolicy,
} from '../lambdas/domain/email/reputation';
import { contextObject } from './context-object';

export const CONTEXT_REPUTATION = 'sendflow:reputation';

export type ReputationSettings = ReputationPolicy & { readonly events: boolean };

export const DEFAULT_REPUTATION: ReputationSettings = { ...DEFAULT_REPUTATION_POLICY, events: false };

const fraction = z.number().gt(0).lt(1);
const stageReputation = z.strictObject({
  windowDays: z.int().min(1).max(MAX_WINDOW_DAYS).optional(),
  minimumSent: z.int().min(1).optional(),
  warnBounceRate: fraction.optional(),
  warnComplaintRate: fraction.optional(),
  pauseBounceRate: fraction.optional(),
  pauseComplaintRate: fraction.optional(),
  judgeTestMode: z.boolean().optional(),
  events: z.boolean().optional(),
});

const EXAMPLE =
  '{"prod": {"windowDays": 7, "minimumSent": 200, "warnBounceRate": 0.04, "warnComplaintRate": 0.0008, ' +
  '"pauseBounceRate": 0.08, "pauseComplaintRate": 0.003, "judgeTestMode": false, "events": false}}';

/**
 * The stage's entry of `sendflow:reputation` (`{"<stage>": {...}}`), over the defaults. Every stage's entry is
 * checked, so a typo or a threshold at or past SES's own fails synth with every problem listed.
 */
export function parseReputation(raw: unknown, stage: string, key = CONTEXT_REPUTATION): ReputationSettings {
  if (raw === undefined) return DEFAULT_REPUTATION;
  const stages = contextObject(raw, key, EXAMPLE);
  const parsed = z.record(z.string(), stageReputation).safeParse(stages);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new Error(`Context ${key}: ${problems.join('; ')}. Example: ${EXAMPLE}`);
  }
  const settings = Object.fromEntries(Object.entries(parsed.data).map(([name, entry]) => [name, merged(entry)]));
  const problems = Object.entries(settings).flatMap(([name, policy]) =>
    policyProblems(policy).map((problem) => `${name}: ${problem}`),
  );
  if (problems.length) throw new Error(`Context ${key}: ${problems.join('; ')}. Example: ${EXAMPLE}`);
  return settings[stage] ?? DEFAULT_REPUTATION;
}

function merged(entry: z.infer<typeof stageReputation>): ReputationSettings {
  const d = DEFAULT_REPUTATION;
  return {
    windowDays: entry.windowDays ?? d.windowDays,
    minimumSent: entry.minimumSent ?? d.minimumSent,
    warn: {
      bounceRate: entry.warnBounceRate ?? d.warn.bounceRate,
      complaintRate: entry.warnComplaintRate ?? d.warn.complaintRate,
    },
    pause: {
      bounceRate: entry.pauseBounceRate ?? d.pause.bounceRate,
      complaintRate: entry.pauseComplaintRate ?? d.pause.complaintRate,
    },
    judgeTestMode: entry.judgeTestMode ?? d.judgeTestMode,
    events: entry.events ?? d.events,
  };
}

/** The functions' environment for these settings (lambdas/runtime/config.ts reads them back). */
export function reputationEnvironment(settings: ReputationSettings): Record<string, string> {
  return {
    SF_REPUTATION_WINDOW_DAYS: String(settings.windowDays),
    SF_REPUTATION_MINIMUM_SENT: String(settings.minimumSent),
    SF_REPUTATION_WARN_BOUNCE_RATE: String(settings.warn.bounceRate),
    SF_REPUTATION_WARN_COMPLAINT_RATE: String(settings.warn.complaintRate),
    SF_REPUTATION_PAUSE_BOUNCE_RATE: String(settings.pause.bounceRate),
    SF_REPUTATION_PAUSE_COMPLAINT_RATE: String(settings.pause.complaintRate),
    SF_REPUTATION_JUDGE_TEST_MODE: String(settings.judgeTestMode),
    SF_REPUTATION_EVENTS: String(settings.events),
  };
}
