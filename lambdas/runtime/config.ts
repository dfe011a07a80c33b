// One configuration schema, parsed once at start-up, frozen; every problem is reported at once.
import * as z from 'zod';
import { MAX_SEND_BODY_BYTES } from '../domain/body-ceiling';
import { DEFAULT_REPUTATION_POLICY, policyProblems, type ReputationPolicy } from '../domain/email/reputation';
import { LISTEN_MAX_WAIT_SECONDS } from '../domain/listen';
import { parseStoredFormats, type StoredFormats } from '../domain/stored-formats';
import { DEFAULT_DISABLE_AFTER_SECONDS, DEFAULT_FAILING_AFTER_SECONDS } from '../domain/webhooks/auto-disable';
import { type TableName, tableEnvVar, tableNames } from '../manifest';

const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);
const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** How long the delivery worker keeps a webhook it read on AWS (SF_WEBHOOK_CACHE_SECONDS' default). */
export const DEFAULT_WEBHOOK_CACHE_SECONDS = 1;

/** The local inbound SMTP server's port unless SF_SMTP_PORT says otherwise (25 needs root). */
export const DEFAULT_SMTP_PORT = 2525;

const schema = z.object({
  /** Largest request body accepted, in bytes; larger bodies get 413. */
  SF_MAX_BODY_BYTES: positiveInt.max(10 * 1024 * 1024).default(1024 * 1024),
  /**
   * Largest body of POST /v1/emails and /v1/emails/batch (attachments as base64), in bytes. Defaults to the AWS
   * ceiling (3,000,000: the API Lambda's 6 MB event must hold the body after JSON escaping doubles it; the stack
   * sets it and the WAF refuses more with 413), so local and AWS agree. Up to 5 MiB locally only, where no Lambda
   * payload limit applies. Never below SF_MAX_BODY_BYTES.
   */
  SF_MAX_SEND_BODY_BYTES: positiveInt.max(5 * 1024 * 1024).default(MAX_SEND_BODY_BYTES),
  /** Requests per second allowed per client IP for requests without a valid key. */
  SF_IP_RATE_LIMIT: positiveInt.default(20),
  /** Authorizer result cache, seconds (API Gateway caps it at 3600). */
  SF_AUTH_CACHE_TTL: nonNegativeInt.max(3600).default(0),
  POWERTOOLS_LOG_LEVEL: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'CRITICAL']).default('INFO'),
  /**
   * Local runtime only: `pretty` (a short line per request and attempt, for people) or `json` (the AWS
   * functions' lines). Unset: pretty when stdout is a terminal, JSON otherwise. The AWS functions ignore it.
   */
  SF_LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  /** Powertools Metrics (EMF on stdout, namespace Sendflow): on by default, off in the local runtime. */
  SF_METRICS: flag.default(true),
  /** The `service` dimension of every metric: one value per deployment (stage), shared by its functions. */
  SF_METRICS_SERVICE: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/)
    .default('sendflow'),
  /** Local runtime only. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  SF_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Local runtime: the inbound SMTP server's port (docs/inbound.md), on SF_HOST. 0 picks a free port. Unset:
   * 2525, or a free port when PORT is 0 (a test or a second runtime asking for free ports gets both).
   */
  SF_SMTP_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Local runtime: PEM files of a key and certificate; with both, the inbound SMTP server offers STARTTLS. */
  SF_SMTP_TLS_KEY: z.string().min(1).optional(),
  SF_SMTP_TLS_CERT: z.string().min(1).optional(),
  SF_DATA_DIR: z.string().min(1).default('.data'),
  SF_SEED: flag.default(true),
  /** Local runtime: seconds a start waits for the data directory's lock (a previous Sendflow still stopping). */
  SF_DATA_DIR_WAIT_SECONDS: nonNegativeInt.max(600).default(30),
  /** Local gateway: the whole request (headers and body) must arrive within this; else 408 and close. */
  SF_REQUEST_TIMEOUT_MS: positiveInt.max(600_000).default(30_000),
  /** Local gateway: the request headers must arrive within this (at most the request time-out). */
  SF_HEADERS_TIMEOUT_MS: positiveInt.max(600_000).default(10_000),
  /** Local gateway: a body that sends nothing for this long is cut (408). */
  SF_BODY_IDLE_TIMEOUT_MS: positiveInt.max(600_000).default(10_000),
  /** Seconds between automatic attempts, comma-separated (spec: 1,30,300,1800 → 5 attempts). */
  SF_RETRY_DELAYS: z
    .string()
    .default('1,30,300,1800')
    .transform((v) => v.split(',').map((d) => Number(d.trim())))
    .pipe(z.array(z.number().min(0).max(86_400)).min(1).max(20)),
  /** Answer time-out of one webhook attempt (spec: 10 s). */
  SF_ATTEMPT_TIMEOUT_MS: positiveInt.max(60_000).default(10_000),
  /** Allow http:// and private/loopback webhook URLs: on in the local runtime, never on AWS. */
  SF_ALLOW_PRIVATE_WEBHOOKS: flag.default(false),
  /**
   * AWS destinations (docs/webhooks.md): every STS, EventBridge and SQS call of the delivery goes to this endpoint
   * instead of AWS's (a local stand-in, LocalStack); unset: AWS's own. Sendflow's own STS calls sign with the
   * process's AWS credentials (the default chain: AWS_ACCESS_KEY_ID…, a profile, the Lambda role).
   */
  SF_AWS_ENDPOINT_URL: z.url().optional(),
  /**
   * The principal customers' trust policies name (the delivery function's role ARN; set by the stack on AWS).
   * Unset: the trust policy snippet names `arn:aws:iam::<Sendflow's account>:root` as a placeholder to fill in.
   */
  SF_AWS_TRUST_PRINCIPAL: z.string().min(1).optional(),
  /** The region of Sendflow's own STS calls: Lambda's AWS_REGION; locally us-east-1 unless set. */
  AWS_REGION: z.string().min(1).default('us-east-1'),
  /**
   * Allow http://, private/loopback addresses and any port for attachment `path` URLs: off everywhere by default
   * (locally too: a `path`'s body comes back to the caller as a file, a webhook's never does). Tests with a
   * loopback file server set it. Link-local and metadata addresses stay refused.
   */
  SF_ALLOW_PRIVATE_ATTACHMENT_URLS: flag.default(false),
  /**
   * Seconds the delivery worker keeps a webhook it read (a pause, deletion or change reaches attempts within it):
   * 1 on AWS, where every batch re-reading its tenant's webhooks heats their partition; 0 (exact) locally.
   */
  SF_WEBHOOK_CACHE_SECONDS: nonNegativeInt.max(60).default(DEFAULT_WEBHOOK_CACHE_SECONDS),
  /**
   * Auto-disable: a webhook with no successful delivery for this long (and at least 10 failed deliveries) is
   * disabled (5 days, Svix's choice). On AWS the stage's `sendflow:webhookDisableAfterSeconds`.
   */
  SF_WEBHOOK_DISABLE_AFTER_SECONDS: positiveInt.max(90 * 86_400).default(DEFAULT_DISABLE_AFTER_SECONDS),
  /** A webhook failing for this long sends `webhook.failing` to the account's other webhooks, once per streak. */
  SF_WEBHOOK_FAILING_AFTER_SECONDS: positiveInt.max(90 * 86_400).default(DEFAULT_FAILING_AFTER_SECONDS),
  /**
   * The longest a listen-session poll waits for an event (docs/webhooks.md, "Listen on your laptop"): 20 locally;
   * 0 on AWS, where a waiting poll would hold one of the API function's reserved executions.
   */
  SF_LISTEN_MAX_WAIT_SECONDS: nonNegativeInt.max(LISTEN_MAX_WAIT_SECONDS).default(LISTEN_MAX_WAIT_SECONDS),
  /** Days final deliveries stay in the log (spec: 30). */
  SF_DELIVERY_RETENTION_DAYS: positiveInt.max(365).default(30),
  /**
   * Days an email and everything of it (its item, body, recipient states, event history) is kept after it was
   * accepted (or scheduled for): DynamoDB TTL removes them after, and reads skip them meanwhile.
   */
  SF_EMAIL_RETENTION_DAYS: positiveInt.max(3650).default(30),
  /**
   * The longest one received message's parse may take (a worker thread, terminated past it; the message is then
   * stored with what its header block gives). The inbound function's stack sets it well below its time-out.
   */
  SF_INBOUND_PARSE_SECONDS: positiveInt.max(600).default(10),
  /** How overdue a pending attempt must be before the reconciler re-queues it. */
  SF_RECONCILE_GRACE_SECONDS: positiveInt.default(120),
  /** Local runtime: seconds between reconciler runs. */
  SF_RECONCILE_INTERVAL_SECONDS: positiveInt.default(30),
  /** Simulator: seconds between the events of one simulated email (0 in tests). */
  SF_SIMULATOR_STEP_SECONDS: z.coerce.number().min(0).max(60).default(1),
  /** Simulator: seconds after which an added domain verifies. */
  SF_DOMAIN_VERIFY_SECONDS: z.coerce.number().min(0).max(86_400).default(10),
  /**
   * Live-mode copies per second this process may hand to the provider (SES's maximum send rate); unset: no
   * pacing. On AWS the stack sets the send worker's share (sendflow:sesMaxSendRate over the sends consumer's
   * MaximumConcurrency); locally, one process, it is the whole rate. Test mode is never paced.
   */
  SF_SES_MAX_SEND_RATE: z.coerce.number().positive().max(10_000).optional(),
  /**
   * Sending reputation (docs/sending.md, "Sending reputation"): the rolling window (UTC days, today included), the
   * copies sent in it before a tenant or domain is judged, and the warning and pause thresholds (fractions: 0.04 is
   * 4%), below SES's own. On AWS the stage's `sendflow:reputation` sets them.
   */
  SF_REPUTATION_WINDOW_DAYS: positiveInt.default(DEFAULT_REPUTATION_POLICY.windowDays),
  SF_REPUTATION_MINIMUM_SENT: positiveInt.default(DEFAULT_REPUTATION_POLICY.minimumSent),
  SF_REPUTATION_WARN_BOUNCE_RATE: z.coerce.number().default(DEFAULT_REPUTATION_POLICY.warn.bounceRate),
  SF_REPUTATION_WARN_COMPLAINT_RATE: z.coerce.number().default(DEFAULT_REPUTATION_POLICY.warn.complaintRate),
  SF_REPUTATION_PAUSE_BOUNCE_RATE: z.coerce.number().default(DEFAULT_REPUTATION_POLICY.pause.bounceRate),
  SF_REPUTATION_PAUSE_COMPLAINT_RATE: z.coerce.number().default(DEFAULT_REPUTATION_POLICY.pause.complaintRate),
  /** Judge test mode too (its simulated bounces then warn and pause test-mode sending): tests and rehearsals. */
  SF_REPUTATION_JUDGE_TEST_MODE: flag.default(DEFAULT_REPUTATION_POLICY.judgeTestMode),
  /**
   * Tell warnings as account.reputation_warning events and accept subscriptions to them. Off by default
   * (expand/contract): a release before this one cannot read a webhook subscribed to the type; turn it on once the
   * stage will not roll back past this release. Off, warnings and pauses are still noted, shown and enforced.
   */
  SF_REPUTATION_EVENTS: flag.default(false),
  /** Signs public links (one-click unsubscribe, contact confirmation); at least 32 characters. */
  SF_SIGNING_SECRET: z.string().min(32).optional(),
  /** Public base URL of the API including /v1, for links in emails (the local runtime knows its own). */
  SF_PUBLIC_URL: z.url().optional(),
  /**
   * Which new stored formats are written (`deliveryShards=off,...`; domain/stored-formats.ts): this release's
   * defaults for the formats not named. On AWS the stage's `sendflow:storedFormats`.
   */
  SF_STORED_FORMATS: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      try {
        return parseStoredFormats(raw);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /**
   * OpenTelemetry traces (docs/webhooks.md#traces), in OpenTelemetry's own names: set, spans are exported over
   * OTLP/HTTP (JSON) to `<endpoint>/v1/traces` (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given); unset, none are.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  /** `key=value` pairs, comma-separated, URL-encoded values (an API key of the backend): never logged. */
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  /** The spans' `service.name`; the function's or `sendflow` when unset. */
  OTEL_SERVICE_NAME: z.string().min(1).max(100).optional(),
  /** `true` turns tracing off whatever the endpoint says (OpenTelemetry's switch). */
  OTEL_SDK_DISABLED: flag.default(false),
  /** AWS only: queue URLs and the retry schedule group, set by the stack. */
  SF_EVENTS_QUEUE_URL: z.string().optional(),
  /** The REST API whose authorizer cache is flushed on revocations and plan changes. */
  SF_REST_API_ID: z.string().optional(),
  SF_DELIVERIES_QUEUE_URL: z.string().optional(),
  SF_DELIVERIES_QUEUE_ARN: z.string().optional(),
  SF_SCHEDULE_GROUP: z.string().optional(),
  SF_SCHEDULER_ROLE_ARN: z.string().optional(),
  SF_SCHEDULER_DLQ_ARN: z.string().optional(),
  ...(Object.fromEntries(tableNames.map((table) => [tableEnvVar(table), z.string().min(3).max(255)])) as Record<
    string,
    z.ZodString
  >),
});

export interface Config {
  readonly maxBodyBytes: number;
  /** The send routes' body limit (SF_MAX_SEND_BODY_BYTES, at least maxBodyBytes). */
  readonly maxSendBodyBytes: number;
  readonly ipRateLimit: number;
  readonly authCacheTtlSeconds: number;
  readonly logLevel: z.infer<typeof schema>['POWERTOOLS_LOG_LEVEL'];
  /** Local runtime: SF_LOG_FORMAT, when set (else decided by whether stdout is a terminal). */
  readonly logFormat?: 'json' | 'pretty';
  /** Metrics' `service` dimension, or null when metrics are off (the log lines stay). */
  readonly metricsService: string | null;
  readonly port: number;
  readonly host: string;
  /** The local inbound SMTP server's port (SF_SMTP_PORT); 0 picks a free one. */
  readonly smtpPort: number;
  /** PEM file paths (SF_SMTP_TLS_KEY, SF_SMTP_TLS_CERT): STARTTLS is offered only with both. */
  readonly smtpTls?: { readonly keyFile: string; readonly certFile: string };
  /** A directory, or `:memory:` for an ephemeral store. */
  readonly dataDir: string;
  /** How long a start waits for the data directory's lock held by another process (SF_DATA_DIR_WAIT_SECONDS). */
  readonly dataDirWaitSeconds: number;
  /** Create a default account and key on first start of an empty store. */
  readonly seed: boolean;
  /** Local gateway time-outs. */
  readonly localHttp: {
    readonly requestTimeoutMs: number;
    readonly headersTimeoutMs: number;
    readonly bodyIdleTimeoutMs: number;
  };
  readonly tables: Readonly<Record<TableName, string>>;
  readonly webhooks: {
    readonly retryDelaysSeconds: readonly number[];
    readonly attemptTimeoutMs: number;
    readonly allowPrivateUrls: boolean;
    readonly retentionSeconds: number;
    readonly reconcileGraceSeconds: number;
    readonly reconcileIntervalSeconds: number;
    /** How long the delivery worker keeps a webhook it read (SF_WEBHOOK_CACHE_SECONDS); 0: never. */
    readonly cacheSeconds: number;
    /** Auto-disable's window (SF_WEBHOOK_DISABLE_AFTER_SECONDS) and failing notice (SF_WEBHOOK_FAILING_AFTER_SECONDS). */
    readonly disableAfterSeconds: number;
    readonly failingAfterSeconds: number;
    /** AWS destinations: the endpoint override, the trust policies' principal, the STS region. */
    readonly aws: {
      readonly endpoint?: string;
      readonly trustPrincipal?: string;
      readonly region: string;
    };
  };
  /** Attachment `path` fetching. */
  readonly attachments: {
    /** SF_ALLOW_PRIVATE_ATTACHMENT_URLS: http, private addresses and any port (tests only). */
    readonly allowPrivateUrls: boolean;
  };
  /** The time-box of one received message's parse (SF_INBOUND_PARSE_SECONDS), in milliseconds. */
  readonly inboundParseMs: number;
  /** How long emails and everything of theirs are kept (SF_EMAIL_RETENTION_DAYS), in seconds. */
  readonly emailRetentionSeconds: number;
  /** The longest a listen-session poll waits (SF_LISTEN_MAX_WAIT_SECONDS), in ms. */
  readonly listenMaxWaitMs: number;
  readonly simulatorStepSeconds: number;
  readonly domainVerifySeconds: number;
  /** Live-mode copies per second of this process (SF_SES_MAX_SEND_RATE); absent: unpaced. */
  readonly sesMaxSendRate?: number;
  /** How tenants' bounce and complaint rates are judged (SF_REPUTATION_*), and whether warnings are told as events. */
  readonly reputation: ReputationPolicy & { readonly events: boolean };
  readonly signingSecret?: string;
  readonly publicUrl?: string;
  /** Which new stored formats this process writes (SF_STORED_FORMATS over this release's defaults). */
  readonly storedFormats: StoredFormats;
  /** Where spans go (OTLP/HTTP), when tracing is on; absent: off (a caller's traceparent still passes through). */
  readonly tracing?: TracingConfig;
  /** AWS wiring; absent locally. */
  readonly aws: {
    readonly eventsQueueUrl?: string;
    readonly restApiId?: string;
    readonly deliveriesQueueUrl?: string;
    readonly deliveriesQueueArn?: string;
    readonly scheduleGroup?: string;
    readonly schedulerRoleArn?: string;
    readonly schedulerDlqArn?: string;
  };
}

export interface TracingConfig {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  readonly url: string;
  /** Headers of every export (OTEL_EXPORTER_OTLP_HEADERS). */
  readonly headers: Readonly<Record<string, string>>;
  /** OTEL_SERVICE_NAME, when set (else the function's service name). */
  readonly serviceName?: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses configuration from the environment. `defaults` fill variables the runtime knows better than the
 * environment (the local runtime names its own tables); the environment always wins.
 */
export function loadConfig(env: NodeJS.ProcessEnv, defaults: Record<string, string> = {}): Config {
  const source = {
    ...defaults,
    ...Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== '')),
  };
  const parsed = schema
    .refine((c) => !c.SF_SMTP_TLS_KEY === !c.SF_SMTP_TLS_CERT, {
      path: ['SF_SMTP_TLS_KEY'],
      message: 'set SF_SMTP_TLS_KEY and SF_SMTP_TLS_CERT together (STARTTLS needs both), or neither',
    })
    .superRefine((c, ctx) => {
      for (const problem of policyProblems(reputationPolicy(c))) {
        ctx.addIssue({ code: 'custom', path: ['SF_REPUTATION'], message: problem });
      }
    })
    .safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const c = parsed.data;
  return Object.freeze({
    maxBodyBytes: c.SF_MAX_BODY_BYTES,
    maxSendBodyBytes: Math.max(c.SF_MAX_BODY_BYTES, c.SF_MAX_SEND_BODY_BYTES),
    ipRateLimit: c.SF_IP_RATE_LIMIT,
    authCacheTtlSeconds: c.SF_AUTH_CACHE_TTL,
    logLevel: c.POWERTOOLS_LOG_LEVEL,
    ...(c.SF_LOG_FORMAT ? { logFormat: c.SF_LOG_FORMAT } : {}),
    metricsService: c.SF_METRICS ? c.SF_METRICS_SERVICE : null,
    port: c.PORT,
    host: c.SF_HOST,
    smtpPort: c.SF_SMTP_PORT ?? (c.PORT === 0 ? 0 : DEFAULT_SMTP_PORT),
    ...(c.SF_SMTP_TLS_KEY && c.SF_SMTP_TLS_CERT
      ? { smtpTls: Object.freeze({ keyFile: c.SF_SMTP_TLS_KEY, certFile: c.SF_SMTP_TLS_CERT }) }
      : {}),
    dataDir: c.SF_DATA_DIR,
    dataDirWaitSeconds: c.SF_DATA_DIR_WAIT_SECONDS,
    seed: c.SF_SEED,
    localHttp: Object.freeze({
      requestTimeoutMs: c.SF_REQUEST_TIMEOUT_MS,
      headersTimeoutMs: Math.min(c.SF_HEADERS_TIMEOUT_MS, c.SF_REQUEST_TIMEOUT_MS),
      bodyIdleTimeoutMs: c.SF_BODY_IDLE_TIMEOUT_MS,
    }),
    webhooks: Object.freeze({
      retryDelaysSeconds: Object.freeze(c.SF_RETRY_DELAYS),
      attemptTimeoutMs: c.SF_ATTEMPT_TIMEOUT_MS,
      allowPrivateUrls: c.SF_ALLOW_PRIVATE_WEBHOOKS,
      retentionSeconds: c.SF_DELIVERY_RETENTION_DAYS * 86_400,
      reconcileGraceSeconds: c.SF_RECONCILE_GRACE_SECONDS,
      reconcileIntervalSeconds: c.SF_RECONCILE_INTERVAL_SECONDS,
      cacheSeconds: c.SF_WEBHOOK_CACHE_SECONDS,
      disableAfterSeconds: c.SF_WEBHOOK_DISABLE_AFTER_SECONDS,
      failingAfterSeconds: c.SF_WEBHOOK_FAILING_AFTER_SECONDS,
      aws: Object.freeze({
        ...(c.SF_AWS_ENDPOINT_URL ? { endpoint: c.SF_AWS_ENDPOINT_URL } : {}),
        ...(c.SF_AWS_TRUST_PRINCIPAL ? { trustPrincipal: c.SF_AWS_TRUST_PRINCIPAL } : {}),
        region: c.AWS_REGION,
      }),
    }),
    attachments: Object.freeze({ allowPrivateUrls: c.SF_ALLOW_PRIVATE_ATTACHMENT_URLS }),
    emailRetentionSeconds: c.SF_EMAIL_RETENTION_DAYS * 86_400,
    inboundParseMs: c.SF_INBOUND_PARSE_SECONDS * 1000,
    listenMaxWaitMs: c.SF_LISTEN_MAX_WAIT_SECONDS * 1000,
    simulatorStepSeconds: c.SF_SIMULATOR_STEP_SECONDS,
    domainVerifySeconds: c.SF_DOMAIN_VERIFY_SECONDS,
    ...(c.SF_SES_MAX_SEND_RATE !== undefined ? { sesMaxSendRate: c.SF_SES_MAX_SEND_RATE } : {}),
    reputation: Object.freeze({ ...reputationPolicy(c), events: c.SF_REPUTATION_EVENTS }),
    ...(c.SF_SIGNING_SECRET ? { signingSecret: c.SF_SIGNING_SECRET } : {}),
    ...(c.SF_PUBLIC_URL ? { publicUrl: c.SF_PUBLIC_URL.replace(/\/$/, '') } : {}),
    storedFormats: Object.freeze(c.SF_STORED_FORMATS),
    ...tracingConfig(c),
    aws: Object.freeze({
      ...(c.SF_EVENTS_QUEUE_URL ? { eventsQueueUrl: c.SF_EVENTS_QUEUE_URL } : {}),
      ...(c.SF_REST_API_ID ? { restApiId: c.SF_REST_API_ID } : {}),
      ...(c.SF_DELIVERIES_QUEUE_URL ? { deliveriesQueueUrl: c.SF_DELIVERIES_QUEUE_URL } : {}),
      ...(c.SF_DELIVERIES_QUEUE_ARN ? { deliveriesQueueArn: c.SF_DELIVERIES_QUEUE_ARN } : {}),
      ...(c.SF_SCHEDULE_GROUP ? { scheduleGroup: c.SF_SCHEDULE_GROUP } : {}),
      ...(c.SF_SCHEDULER_ROLE_ARN ? { schedulerRoleArn: c.SF_SCHEDULER_ROLE_ARN } : {}),
      ...(c.SF_SCHEDULER_DLQ_ARN ? { schedulerDlqArn: c.SF_SCHEDULER_DLQ_ARN } : {}),
    }),
    tables: Object.freeze(
      Object.fromEntries(tableNames.map((table) => [table, String(source[tableEnvVar(table)])])) as Record<
        TableName,
        string
      >,
    ),
  });
}

/** Tracing's settings from the OTEL_* variables: none when no endpoint is set or the SDK is disabled. */
function tracingConfig(c: z.infer<typeof schema>): { tracing?: TracingConfig } {
  const base = c.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = c.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base.replace(/\/$/, '')}/v1/traces` : undefined);
  if (!url || c.OTEL_SDK_DISABLED) return {};
  return {
    tracing: Object.freeze({
      url,
      headers: Object.freeze(otlpHeaders(c.OTEL_EXPORTER_OTLP_HEADERS)),
      ...(c.OTEL_SERVICE_NAME ? { serviceName: c.OTEL_SERVICE_NAME } : {}),
    }),
  };
}

/** OTEL_EXPORTER_OTLP_HEADERS: `k1=v1,k2=v2`, values URL-encoded; a malformed pair is skipped (as the SDK does). */
function otlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {}
  }
  return headers;
}

/** The stage's reputation policy from its SF_REPUTATION_* variables. */
function reputationPolicy(c: z.infer<typeof schema>): ReputationPolicy {
  return {
    windowDays: c.SF_REPUTATION_WINDOW_DAYS,
    minimumSent: c.SF_REPUTATION_MINIMUM_SENT,
    warn: Object.freeze({
      bounceRate: c.SF_REPUTATION_WARN_BOUNCE_RATE,
      complaintRate: c.SF_REPUTATION_WARN_COMPLAINT_RATE,
    }),
    pause: Object.freeze({
      bounceRate: c.SF_REPUTATION_PAUSE_BOUNCE_RATE,
      complaintRate: c.SF_REPUTATION_PAUSE_COMPLAINT_RATE,
    }),
    judgeTestMode: c.SF_REPUTATION_JUDGE_TEST_MODE,
  };
}

/**
 * Defaults of the local runtime: its own table names, webhooks to http/loopback allowed, and no EMF lines
 * among the log lines (SF_METRICS=true turns them on, e.g. to check what the dashboard will see).
 */
export function localTableDefaults(prefix = 'sendflow'): Record<string, string> {
  return {
    ...Object.fromEntries(tableNames.map((table) => [tableEnvVar(table), `${prefix}-${table}`])),
    SF_ALLOW_PRIVATE_WEBHOOKS: 'true',
    SF_RECONCILE_GRACE_SECONDS: '30',
    SF_METRICS: 'false',
    // One process: reading every batch's webhooks costs nothing here, so attempts see every change at once.
    SF_WEBHOOK_CACHE_SECONDS: '0',
  };
}
