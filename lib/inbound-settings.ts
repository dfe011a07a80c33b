// `sendflow:inbound`: which stages receive email through SES, in which region, and whether the deploy makes the
// stage's receipt rule set the active one. A stage not named gets nothing of inbound mail synthesized.
import { contextObject } from './context-object';

export const CONTEXT_INBOUND = 'sendflow:inbound';

/**
 * Regions where SES receives email (their MX target is `inbound-smtp.<region>.amazonaws.com`), as the SES
 * endpoints page listed them in 2024 (docs/runbook.md, "Inbound email on AWS"). SES receiving does not exist
 * elsewhere: a stage set to another region is refused at synth. Add a region here once AWS lists it.
 */
export const SES_RECEIVING_REGIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-2',
  'ap-southeast-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-northeast-1',
  'ca-central-1',
  'eu-central-1',
  'eu-west-1',
  'eu-west-2',
] as const;
export type SesReceivingRegion = (typeof SES_RECEIVING_REGIONS)[number];

export interface InboundSettings {
  /** The region the stage's api stack deploys to; the template refuses to deploy anywhere else. */
  readonly region: SesReceivingRegion;
  /**
   * Make this stage's rule set the active one on deploy (a custom resource calling SetActiveReceiptRuleSet).
   * SES keeps ONE active rule set per account and region: only one stage there may say true. Default false:
   * activating is then the runbook's CLI step.
   */
  readonly activate: boolean;
}

const EXAMPLE = '{"prod": {"region": "eu-west-1", "activate": true}}';

/** The stage's entry of `sendflow:inbound` (an object, or its JSON from `-c`); undefined when it has none. */
export function parseInbound(raw: unknown, stage: string, key = CONTEXT_INBOUND): InboundSettings | undefined {
  if (raw === undefined) return undefined;
  const stages = contextObject(raw, key, EXAMPLE);
  const problems: string[] = [];
  const parsed = new Map<string, InboundSettings>();
  for (const [name, entry] of Object.entries(stages)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`${name} must be an object such as {"region": "eu-west-1"}, got ${JSON.stringify(entry)}`);
      continue;
    }
    const { region, activate = false, ...rest } = entry as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length) problems.push(`${name}: unknown setting ${unknown.join(', ')} (known: region, activate)`);
    if (!SES_RECEIVING_REGIONS.includes(region as SesReceivingRegion)) {
      problems.push(
        `${name}: region must be one where SES receives email (${SES_RECEIVING_REGIONS.join(', ')}), got ${JSON.stringify(region)}`,
      );
    }
    if (typeof activate !== 'boolean')
      problems.push(`${name}: activate must be true or false, got ${String(activate)}`);
    parsed.set(name, { region: region as SesReceivingRegion, activate: activate === true });
  }
  if (problems.length) throw new Error(`Context ${key}: ${problems.join('; ')}`);
  return parsed.get(stage);
}
