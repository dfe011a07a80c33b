// `sendflow:recovery`: per stage, what survives the loss of a table, a bucket or the whole region. A stage not named
// keeps what every stage has (point-in-time recovery of each table, 35 days, in its own region). A stage named gets
// an AWS Backup plan of every retained table with a copy of each backup in another region, the link-signing secret
// replicated there, and the email bodies bucket versioned and replicated there (docs/runbook.md, "Disaster
// recovery"). The copies live in the stage's recovery stack, Sendflow-<stage>-Recovery, deployed to that region.
import { Aws, Fn } from 'aws-cdk-lib';
import { contextObject } from './context-object';

export const CONTEXT_RECOVERY = 'sendflow:recovery';

/** Hours between two backups that divide a day, so backups run at the same hours every day. */
export const BACKUP_INTERVALS_HOURS = [1, 2, 3, 4, 6, 8, 12, 24] as const;

export interface RecoverySettings {
  /** The region the copies go to: any other region of the partition than the stage's (e.g. eu-central-1). */
  readonly region: string;
  /**
   * Hours between backups of the retained tables (BACKUP_INTERVALS_HOURS; 24 by default): with the copy that
   * follows each, the recovery point objective when the stage's region is lost. Each backup is a full copy of the
   * tables, billed per GB-month for as long as it is kept, in both regions.
   */
  readonly backupEveryHours: number;
  /** Days each backup and its copy are kept (7 to 3650; 35 by default, as point-in-time recovery). */
  readonly backupRetentionDays: number;
  /** Version and replicate the email bodies bucket (true by default). */
  readonly buckets: boolean;
  /**
   * Days an overwritten or deleted body object stays recoverable as a noncurrent version, in both buckets (1 to
   * 365; 7 by default). Keeps customer data that long past its retention, so keep it short.
   */
  readonly noncurrentVersionDays: number;
}

const DEFAULTS = { backupEveryHours: 24, backupRetentionDays: 35, buckets: true, noncurrentVersionDays: 7 } as const;
const KNOWN = ['region', ...Object.keys(DEFAULTS)] as const;
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d$/;
const EXAMPLE = '{"prod": {"region": "eu-central-1"}}';

function wholeIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** The stage's entry of `sendflow:recovery` (an object, or its JSON from `-c`); undefined when it has none. */
export function parseRecovery(raw: unknown, stage: string, key = CONTEXT_RECOVERY): RecoverySettings | undefined {
  if (raw === undefined) return undefined;
  const stages = contextObject(raw, key, EXAMPLE);
  const problems: string[] = [];
  const parsed = new Map<string, RecoverySettings>();
  for (const [name, entry] of Object.entries(stages)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`${name} must be an object such as {"region": "eu-central-1"}, got ${JSON.stringify(entry)}`);
      continue;
    }
    const settings: Record<string, unknown> = { ...DEFAULTS, ...(entry as Record<string, unknown>) };
    const unknown = Object.keys(entry).filter((field) => !(KNOWN as readonly string[]).includes(field));
    if (unknown.length) problems.push(`${name}: unknown setting ${unknown.join(', ')} (known: ${KNOWN.join(', ')})`);
    if (typeof settings.region !== 'string' || !REGION.test(settings.region)) {
      problems.push(
        `${name}: region must be a region name such as eu-central-1, got ${JSON.stringify(settings.region)}`,
      );
    }
    if (!(BACKUP_INTERVALS_HOURS as readonly unknown[]).includes(settings.backupEveryHours)) {
      problems.push(
        `${name}: backupEveryHours must be one of ${BACKUP_INTERVALS_HOURS.join(', ')}, got ${JSON.stringify(settings.backupEveryHours)}`,
      );
    }
    if (!wholeIn(settings.backupRetentionDays, 7, 3650)) {
      problems.push(
        `${name}: backupRetentionDays must be a whole number from 7 to 3650, got ${JSON.stringify(settings.backupRetentionDays)}`,
      );
    }
    if (typeof settings.buckets !== 'boolean') {
      problems.push(`${name}: buckets must be true or false, got ${JSON.stringify(settings.buckets)}`);
    }
    if (!wholeIn(settings.noncurrentVersionDays, 1, 365)) {
      problems.push(
        `${name}: noncurrentVersionDays must be a whole number from 1 to 365, got ${JSON.stringify(settings.noncurrentVersionDays)}`,
      );
    }
    parsed.set(name, settings as unknown as RecoverySettings);
  }
  if (problems.length) throw new Error(`Context ${key}: ${problems.join('; ')}`);
  return parsed.get(stage);
}

/** `Sendflow-<stage>-Recovery`: the stack, and its backup vault (vault names are unique per account and region). */
export function recoveryStackName(stage: string): string {
  return `Sendflow-${stage}-Recovery`;
}

/** The copy vault's ARN in the recovery region, as the data stack's backup plan names it. */
export function recoveryVaultArn(stage: string, region: string): string {
  return `arn:${Aws.PARTITION}:backup:${region}:${Aws.ACCOUNT_ID}:backup-vault:${recoveryStackName(stage)}`;
}

/**
 * The replica bucket's name: globally unique, so it carries the account and the region (at most 58 characters
 * with a 20-character stage and the longest region names).
 */
export function replicaBucketName(stage: string, region: string): string {
  return Fn.join('', [`sf-${stage}-bodies-`, Aws.ACCOUNT_ID, `-${region}`]);
}
