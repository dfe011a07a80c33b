// Assembles the Sendflow CDK app: the data stack, then the api stack that depends on it. bin/app.ts and
// the infrastructure tests both build the app through here, so tests check what deploys.

import { type App, Tags } from 'aws-cdk-lib';
import { DEFAULT_DISABLE_AFTER_SECONDS } from '../lambdas/domain/webhooks/auto-disable';
import {
  type AlarmSubscribers,
  CONTEXT_ALARM_EMAIL,
  CONTEXT_ALARM_EMAILS,
  CONTEXT_ALARM_SUBSCRIBERS,
  CONTEXT_UNMONITORED_STAGES,
  checkMonitored,
  isUnmonitored,
  NO_SUBSCRIBERS,
  parseAlarmEmails,
  parseAlarmSubscribers,
} from './alarm-settings';
import { SendflowApiStack } from './api-stack';
import { type ApiThrottle, CONTEXT_API_THROTTLE, parseApiThrottle } from './api-throttle';
import { type LambdaConcurrency, parseLambdaConcurrency } from './concurrency';
import type { CustomDomainSettings } from './constructs/custom-domain';
import { CONTEXT_DEPLOYMENT, type DeploymentStyle, parseDeploymentStyle } from './constructs/deployments';
import { type MaxConcurrency, parseMaxConcurrency, parseSesMaxSendRate } from './consumers';
import { SendflowDataStack } from './data-stack';
import { CONTEXT_INBOUND, type InboundSettings, parseInbound } from './inbound-settings';
import { CONTEXT_NOTICE_FROM, type NoticeSender, parseNoticeFrom } from './notice-settings';
import { DEFAULT_STAGE, InvalidStageError, parseStage, STAGE_TAG, stackNames } from './outputs';
import { CONTEXT_RECOVERY, parseRecovery, type RecoverySettings, recoveryStackName } from './recovery-settings';
import { SendflowRecoveryStack } from './recovery-stack';
import { CONTEXT_REPUTATION, parseReputation, type ReputationSettings } from './reputation-settings';
import { CONTEXT_STORED_FORMATS, parseStoredFormatsContext, storedFormatsVariable } from './stored-formats';
import { CONTEXT_CAPACITY, parseTableCapacity, type TableCapacity } from './table-capacity';
import { CONTEXT_TRACING, parseTracing, type TracingSettings } from './tracing-settings';

export { CONTEXT_API_THROTTLE } from './api-throttle';
export const CONTEXT_AUTHORIZER_CACHE_TTL = 'sendflow:authorizerCacheTtlSeconds';
const DEFAULT_AUTHORIZER_CACHE_TTL = 60;
/** `-c sendflow:stage=staging`: qualifies every stack and physical name (lib/outputs.ts, DEFAULT_STAGE). */
export const CONTEXT_STAGE = 'sendflow:stage';
/** `-c sendflow:adopt=true`, for `cdk import` only: retained data without its dependency on the guard. */
export const CONTEXT_ADOPT = 'sendflow:adopt';
/**
 * Who is paged, per stage (lib/alarm-settings.ts): `sendflow:alarmSubscribers` (e-mail or https://, `page` and
 * `notify`), the older `sendflow:alarmEmails`, and `sendflow:unmonitoredStages`. Committed in cdk.json, so every
 * deploy keeps them; a stage with nobody to page that is not declared unmonitored is refused at synth.
 */
export { CONTEXT_ALARM_EMAIL, CONTEXT_ALARM_EMAILS, CONTEXT_ALARM_SUBSCRIBERS, CONTEXT_UNMONITORED_STAGES };
/** `{"accountQuota": 1000, "api": 100, "authorizer": 50, "public": 20}`: the account's quota and the reservations (lib/concurrency.ts). */
export const CONTEXT_LAMBDA_CONCURRENCY = 'sendflow:lambdaConcurrency';
/** `{"deliveries": 20, ...}`: MaximumConcurrency per SQS consumer (lib/consumers.ts); missing keys keep the manifest's. */
export const CONTEXT_MAX_CONCURRENCY = 'sendflow:maxConcurrency';
/** The SES account's sending rate, emails per second (default 14), shared by the send worker's invocations. */
export const CONTEXT_SES_MAX_SEND_RATE = 'sendflow:sesMaxSendRate';
/** `-c sendflow:emailRetentionDays=90`: days emails and their parts and events are kept (1–3650; 30 by default). */
export const CONTEXT_EMAIL_RETENTION_DAYS = 'sendflow:emailRetentionDays';
/** `-c sendflow:webhookDisableAfterSeconds=86400`: auto-disable's window (SF_WEBHOOK_DISABLE_AFTER_SECONDS; 5 days by default). */
export const CONTEXT_WEBHOOK_DISABLE_AFTER_SECONDS = 'sendflow:webhookDisableAfterSeconds';
export { CONTEXT_NOTICE_FROM } from './notice-settings';
export { CONTEXT_RECOVERY } from './recovery-settings';
/** `-c sendflow:domainName=api.example.com`, with CONTEXT_CERTIFICATE_ARN: public links use this host. */
export const CONTEXT_DOMAIN_NAME = 'sendflow:domainName';
/** `-c sendflow:certificateArn=arn:aws:acm:REGION:ACCOUNT:certificate/ID`: an ACM certificate for the domain. */
export const CONTEXT_CERTIFICATE_ARN = 'sendflow:certificateArn';

export interface SendflowSettings {
  readonly authorizerCacheTtlSeconds: number;
  /** Deployment stage; DEFAULT_STAGE (`prod`) when omitted. */
  readonly stage?: string;
  /**
   * Synthesize the data stack for `cdk import` (docs/runbook.md): its tables and secret then do not depend on
   * the stage guard, which an import cannot create, so the template CDK imports them with stays valid.
   */
  readonly adopt?: boolean;
  /** This stage's `sendflow:alarmEmails`: e-mail addresses paged, as `alarmSubscribers.page`. */
  readonly alarmEmails?: readonly string[];
  /** This stage's `sendflow:alarmSubscribers`: who the paging topic and the non-paging topic reach. */
  readonly alarmSubscribers?: AlarmSubscribers;
  /**
   * Declared in `sendflow:unmonitoredStages`: synthesized without anyone to page. Otherwise a stage without a page
   * subscriber (alarmEmails or alarmSubscribers.page) is refused.
   */
  readonly unmonitored?: boolean;
  /** The account's Lambda quota and the reservations; DEFAULT_LAMBDA_CONCURRENCY when omitted. */
  readonly lambdaConcurrency?: LambdaConcurrency;
  /** The stage's method throttles (`sendflow:apiThrottle`, lib/api-throttle.ts); DEFAULT_API_THROTTLE when omitted. */
  readonly apiThrottle?: ApiThrottle;
  /** Every SQS consumer's MaximumConcurrency; the manifest's when omitted. */
  readonly maxConcurrency?: MaxConcurrency;
  /** The SES account's sending rate, emails per second; DEFAULT_SES_MAX_SEND_RATE when omitted. */
  readonly sesMaxSendRate?: number;
  /** Days emails and everything of theirs are kept (SF_EMAIL_RETENTION_DAYS); DEFAULT_EMAIL_RETENTION_DAYS when omitted. */
  readonly emailRetentionDays?: number;
  /** Auto-disable's window, seconds (SF_WEBHOOK_DISABLE_AFTER_SECONDS of the delivery worker); 5 days when omitted. */
  readonly webhookDisableAfterSeconds?: number;
  /** Custom domain for the API and its public links (docs/runbook.md, "Custom domain"); the execute-api host when omitted. */
  readonly customDomain?: CustomDomainSettings;
  /** DynamoDB capacity of this stage's tables (`sendflow:capacity`, lib/table-capacity.ts); on demand when omitted. */
  readonly tableCapacity?: TableCapacity;
  /** SES receiving for this stage (`sendflow:inbound`, lib/inbound-settings.ts); nothing of it when omitted. */
  readonly inbound?: InboundSettings;
  /** Sending reputation thresholds of this stage (`sendflow:reputation`, lib/reputation-settings.ts); defaults when omitted. */
  readonly reputation?: ReputationSettings;
  /** The accounts' notices' sender of this stage (`sendflow:noticeFrom`, lib/notice-settings.ts); none: notices are logged. */
  readonly noticeFrom?: NoticeSender;
  /**
   * Copies in another region (`sendflow:recovery`, lib/recovery-settings.ts): table backups, the secret, the bodies
   * bucket, held by a third stack, Sendflow-<stage>-Recovery. Point-in-time recovery in the region only when omitted.
   */
  readonly recovery?: RecoverySettings;
  /** How the stage's deployments shift traffic (`sendflow:deployment`); a 10% canary for 5 minutes when omitted. */
  readonly deployment?: DeploymentStyle;
  /** SF_STORED_FORMATS of the stage's functions (`sendflow:storedFormats`, lib/stored-formats.ts); '' or omitted: the defaults. */
  readonly storedFormats?: string;
  /** OpenTelemetry traces of the stage (`sendflow:tracing`, lib/tracing-settings.ts); off when omitted. */
  readonly tracing?: TracingSettings;
}

/** Settings from CDK context (cdk.json, or `-c key=value`, which arrives as a string). */
export function settingsFromContext(app: App): SendflowSettings {
  const adopt = adoptFromContext(app);
  const stage = stageFromContext(app);
  const alarmEmails = alarmEmailsFromContext(app, stage);
  const alarmSubscribers = parseAlarmSubscribers(app.node.tryGetContext(CONTEXT_ALARM_SUBSCRIBERS), stage);
  const unmonitored = isUnmonitored(app.node.tryGetContext(CONTEXT_UNMONITORED_STAGES), stage);
  const customDomain = customDomainFromContext(app);
  const inbound = parseInbound(app.node.tryGetContext(CONTEXT_INBOUND), stage);
  const recovery = parseRecovery(app.node.tryGetContext(CONTEXT_RECOVERY), stage);
  const tracing = parseTracing(app.node.tryGetContext(CONTEXT_TRACING), stage);
  const noticeFrom = parseNoticeFrom(app.node.tryGetContext(CONTEXT_NOTICE_FROM), stage);
  return {
    authorizerCacheTtlSeconds: authorizerCacheTtl(app),
    stage,
    alarmEmails,
    alarmSubscribers,
    unmonitored,
    lambdaConcurrency: parseLambdaConcurrency(
      app.node.tryGetContext(CONTEXT_LAMBDA_CONCURRENCY),
      CONTEXT_LAMBDA_CONCURRENCY,
    ),
    maxConcurrency: parseMaxConcurrency(app.node.tryGetContext(CONTEXT_MAX_CONCURRENCY), CONTEXT_MAX_CONCURRENCY),
    apiThrottle: parseApiThrottle(app.node.tryGetContext(CONTEXT_API_THROTTLE)),
    sesMaxSendRate: parseSesMaxSendRate(app.node.tryGetContext(CONTEXT_SES_MAX_SEND_RATE), CONTEXT_SES_MAX_SEND_RATE),
    emailRetentionDays: parseEmailRetentionDays(app.node.tryGetContext(CONTEXT_EMAIL_RETENTION_DAYS)),
    tableCapacity: parseTableCapacity(app.node.tryGetContext(CONTEXT_CAPACITY), stage),
    webhookDisableAfterSeconds: parseWebhookDisableAfterSeconds(
      app.node.tryGetContext(CONTEXT_WEBHOOK_DISABLE_AFTER_SECONDS),
    ),
    reputation: parseReputation(app.node.tryGetContext(CONTEXT_REPUTATION), stage),
    deployment: parseDeploymentStyle(app.node.tryGetContext(CONTEXT_DEPLOYMENT), stage),
    storedFormats: storedFormatsVariable(
      parseStoredFormatsContext(app.node.tryGetContext(CONTEXT_STORED_FORMATS), stage),
    ),
    ...(adopt ? { adopt } : {}),
    ...(customDomain ? { customDomain } : {}),
    ...(inbound ? { inbound } : {}),
    ...(recovery ? { recovery } : {}),
    ...(tracing ? { tracing } : {}),
    ...(noticeFrom ? { noticeFrom } : {}),
  };
}

/** Whole seconds from 60 to 90 days (SF_WEBHOOK_DISABLE_AFTER_SECONDS' range, a minute at least on AWS). */
export function parseWebhookDisableAfterSeconds(raw: unknown): number {
  if (raw === undefined) return DEFAULT_DISABLE_AFTER_SECONDS;
  const seconds = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 60 || seconds > 90 * 86_400) {
    throw new Error(
      `Context ${CONTEXT_WEBHOOK_DISABLE_AFTER_SECONDS} must be a whole number of seconds from 60 to 7776000, got ${String(raw)}`,
    );
  }
  return seconds;
}

/** Days emails are kept when the stage does not say (as deliveries: 30). */
export const DEFAULT_EMAIL_RETENTION_DAYS = 30;

/** A whole number of days from 1 to 3650 (as SF_EMAIL_RETENTION_DAYS accepts); a string from `-c` is read as one. */
export function parseEmailRetentionDays(raw: unknown): number {
  if (raw === undefined) return DEFAULT_EMAIL_RETENTION_DAYS;
  const days = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 3650) {
    throw new Error(
      `Context ${CONTEXT_EMAIL_RETENTION_DAYS} must be a whole number of days from 1 to 3650, got ${String(raw)}`,
    );
  }
  return days;
}

/** The stage's `sendflow:alarmEmails`; the old one-off `sendflow:alarmEmail` flag is refused with a pointer. */
function alarmEmailsFromContext(app: App, stage: string): readonly string[] {
  if (app.node.tryGetContext(CONTEXT_ALARM_EMAIL) !== undefined) {
    throw new Error(
      `Context ${CONTEXT_ALARM_EMAIL} is replaced by ${CONTEXT_ALARM_EMAILS} and ${CONTEXT_ALARM_SUBSCRIBERS}: put ` +
        `the stage's subscribers in cdk.json, e.g. "${CONTEXT_ALARM_SUBSCRIBERS}": {"${stage}": ["oncall@example.com"]}, ` +
        'so no later deploy drops them.',
    );
  }
  return parseAlarmEmails(app.node.tryGetContext(CONTEXT_ALARM_EMAILS), stage);
}

/** One DNS label: letters, digits and inner hyphens, 1–63 characters. */
const HOST_LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/**
 * A fully qualified hostname of at least two labels, at most 253 characters, its last label not all digits
 * (so no IP address), and no wildcard, scheme, port or path.
 */
const HOSTNAME = new RegExp(`^(?=.{1,253}$)(?:${HOST_LABEL}\\.)+(?=[a-z0-9-]*[a-z])${HOST_LABEL}$`);
/** An ACM certificate ARN in any partition; the region must be the stack's (a regional API domain). */
const ACM_CERTIFICATE_ARN = /^arn:aws[a-z-]*:acm:[a-z]{2}(?:-[a-z]+)+-\d:\d{12}:certificate\/[A-Za-z0-9-]+$/;

function customDomainFromContext(app: App): CustomDomainSettings | undefined {
  const domain: unknown = app.node.tryGetContext(CONTEXT_DOMAIN_NAME);
  const certificate: unknown = app.node.tryGetContext(CONTEXT_CERTIFICATE_ARN);
  if (domain === undefined && certificate === undefined) return undefined;
  if (certificate === undefined) throw new Error(`Context ${CONTEXT_DOMAIN_NAME} needs ${CONTEXT_CERTIFICATE_ARN} too`);
  if (domain === undefined) throw new Error(`Context ${CONTEXT_CERTIFICATE_ARN} needs ${CONTEXT_DOMAIN_NAME} too`);
  const domainName = typeof domain === 'string' ? domain.toLowerCase() : '';
  if (!HOSTNAME.test(domainName)) {
    throw new Error(`Context ${CONTEXT_DOMAIN_NAME} must be a hostname such as api.example.com, got ${String(domain)}`);
  }
  if (typeof certificate !== 'string' || !ACM_CERTIFICATE_ARN.test(certificate)) {
    throw new Error(
      `Context ${CONTEXT_CERTIFICATE_ARN} must be an ACM certificate ARN ` +
        `(arn:aws:acm:REGION:ACCOUNT:certificate/ID), got ${String(certificate)}`,
    );
  }
  return { domainName, certificateArn: certificate };
}

function adoptFromContext(app: App): boolean {
  const raw: unknown = app.node.tryGetContext(CONTEXT_ADOPT);
  if (raw === undefined || raw === false || raw === 'false') return false;
  if (raw === true || raw === 'true') return true;
  throw new Error(`Context ${CONTEXT_ADOPT} must be true or false, got ${String(raw)}`);
}

function authorizerCacheTtl(app: App): number {
  const raw: unknown = app.node.tryGetContext(CONTEXT_AUTHORIZER_CACHE_TTL);
  if (raw === undefined) return DEFAULT_AUTHORIZER_CACHE_TTL;
  const ttl = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0 || ttl > 3600) {
    throw new Error(`Context ${CONTEXT_AUTHORIZER_CACHE_TTL} must be an integer from 0 to 3600, got ${String(raw)}`);
  }
  return ttl;
}

function stageFromContext(app: App): string {
  const raw: unknown = app.node.tryGetContext(CONTEXT_STAGE);
  try {
    return parseStage(raw);
  } catch (error) {
    if (error instanceof InvalidStageError) throw new Error(`Context ${CONTEXT_STAGE}: ${error.message}`);
    throw error;
  }
}

/** Environment-agnostic stacks: no account, no region, no lookups, so synth works offline. */
export function buildSendflow(app: App, settings: SendflowSettings = settingsFromContext(app)) {
  const stage = parseStage(settings.stage ?? DEFAULT_STAGE);
  const subscribers = settings.alarmSubscribers ?? NO_SUBSCRIBERS;
  const alarmSubscribers: AlarmSubscribers = {
    page: [...new Set([...(settings.alarmEmails ?? []), ...subscribers.page])],
    notify: [...new Set(subscribers.notify)],
  };
  // Before anything is built: a stage whose alarms page nobody is refused unless declared unmonitored.
  checkMonitored(stage, alarmSubscribers, settings.unmonitored === true);
  const names = stackNames(stage);
  const data = new SendflowDataStack(app, names.data, {
    description: `Sendflow ${stage} stateful resources: DynamoDB tables, the email bodies bucket and the link-signing secret (retained)`,
    stage,
    guardFirst: !settings.adopt,
    ...(settings.emailRetentionDays !== undefined ? { emailRetentionDays: settings.emailRetentionDays } : {}),
    ...(settings.tableCapacity ? { capacity: settings.tableCapacity } : {}),
    ...(settings.recovery ? { recovery: settings.recovery } : {}),
    // Deleting this stack leaves its retained tables behind; make that a deliberate act (docs/runbook.md).
    terminationProtection: true,
  });
  // The copies' side, in the recovery region, deployed first: the bodies bucket's replication needs its replica to
  // exist. Only an ordering: the data stack names the vault and the bucket, it references nothing across regions.
  const recovery =
    settings.recovery &&
    new SendflowRecoveryStack(app, recoveryStackName(stage), {
      description: `Sendflow ${stage} recovery copies in ${settings.recovery.region}: the table backups' copy vault and the bodies replica (retained)`,
      stage,
      recovery: settings.recovery,
      emailRetentionDays: settings.emailRetentionDays ?? DEFAULT_EMAIL_RETENTION_DAYS,
    });
  if (recovery) {
    data.addStackDependency(
      recovery,
      'the bodies bucket replicates into, and the backup plan copies into, its resources',
    );
  }
  const api = new SendflowApiStack(app, names.api, {
    description: `Sendflow ${stage} stateless resources: REST API, functions, usage plans, WAF`,
    tableParameters: data.tableParameters,
    signingSecretParameter: data.signingSecretParameter,
    emailBodiesParameter: data.emailBodiesParameter,
    authorizerCacheTtlSeconds: settings.authorizerCacheTtlSeconds,
    alarmSubscribers,
    ...(settings.lambdaConcurrency ? { lambdaConcurrency: settings.lambdaConcurrency } : {}),
    ...(settings.maxConcurrency ? { maxConcurrency: settings.maxConcurrency } : {}),
    ...(settings.apiThrottle ? { apiThrottle: settings.apiThrottle } : {}),
    ...(settings.sesMaxSendRate !== undefined ? { sesMaxSendRate: settings.sesMaxSendRate } : {}),
    ...(settings.emailRetentionDays !== undefined ? { emailRetentionDays: settings.emailRetentionDays } : {}),
    ...(settings.webhookDisableAfterSeconds !== undefined
      ? { webhookDisableAfterSeconds: settings.webhookDisableAfterSeconds }
      : {}),
    ...(settings.customDomain ? { customDomain: settings.customDomain } : {}),
    ...(settings.inbound ? { inbound: settings.inbound } : {}),
    ...(settings.reputation ? { reputation: settings.reputation } : {}),
    ...(settings.noticeFrom ? { noticeFrom: settings.noticeFrom } : {}),
    ...(settings.deployment ? { deployment: settings.deployment } : {}),
    ...(settings.storedFormats ? { storedFormats: settings.storedFormats } : {}),
    ...(settings.tracing ? { tracing: settings.tracing } : {}),
  });
  // Deploy order only: the api stack reads the data stack's SSM parameters, it imports nothing.
  api.addStackDependency(data, 'reads the table names and the secret ARN the data stack publishes in SSM');
  // Stack tags reach every taggable resource (CDK) and every resource CloudFormation tags on deploy.
  for (const stack of [data, api, ...(recovery ? [recovery] : [])]) Tags.of(stack).add(STAGE_TAG, stage);
  return { data, api, stage, recovery };
}
