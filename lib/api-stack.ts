// The stateless stack: the REST API (stage v1), its functions, usage plans, gateway responses, WAF, the
// webhook pipeline (queues, dispatcher, delivery worker, retry schedules, reconciler, alarms) and the email
// pipeline (scheduled sends, the SES configuration set and its events).
// Everything here can be replaced without touching data; tables are found through SSM parameters.
import {
  ArnFormat,
  Aws,
  CfnOutput,
  Duration,
  Fn,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  ApiKeySourceType,
  AuthorizationType,
  type CfnRestApi,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  type Method,
  MethodLoggingLevel,
  RequestAuthorizer,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { type IGrantable, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, LogRetention, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import { RETENTION_PREFIX } from '../lambdas/adapters/aws/s3-expiry-keys';
import { FILTERED_PREFIX } from '../lambdas/adapters/dynamodb/filtered-counts';
import { LANE_PREFIX } from '../lambdas/adapters/dynamodb/order-lanes';
import { EMAIL_OBJECTS_PREFIX } from '../lambdas/adapters/email-body-object';
import { MAX_SEND_BODY_BYTES } from '../lambdas/domain/body-ceiling';
import { PLAN_NAMES, PLANS } from '../lambdas/domain/plans';
import { PUBLIC_ROUTE_IP_FACTOR } from '../lambdas/handlers/middleware/rate-limit';
import {
  type RouteSpec,
  routes,
  STAGE,
  type TableName,
  type TableSpec,
  tableEnvVar,
  tableNames,
  tables,
} from '../lambdas/manifest';
import { type AlarmSubscribers, NO_SUBSCRIBERS } from './alarm-settings';
import { type ApiThrottle, DEFAULT_API_THROTTLE } from './api-throttle';
import { checkConcurrency, DEFAULT_LAMBDA_CONCURRENCY, type LambdaConcurrency, reservation } from './concurrency';
import { ApiCustomDomain, type CustomDomainSettings } from './constructs/custom-domain';
import { DeliveryPipeline } from './constructs/delivery-pipeline';
import { DEFAULT_DEPLOYMENT_STYLE, type DeploymentStyle, Deployments } from './constructs/deployments';
import { EmailPipeline } from './constructs/email-pipeline';
import { ApiFirewall } from './constructs/firewall';
import { addGatewayResponses } from './constructs/gateway-responses';
import { InboundMail } from './constructs/inbound-mail';
import { Monitoring } from './constructs/monitoring';
import { NodeFunction, timeouts } from './constructs/node-function';
import { allowSend } from './constructs/queues';
import { quickjsWasmBundling } from './constructs/quickjs-wasm';
import { DEFAULT_MAX_CONCURRENCY, DEFAULT_SES_MAX_SEND_RATE, type MaxConcurrency } from './consumers';
import type { InboundSettings } from './inbound-settings';
import { deployedIndexes } from './index-migration';
import type { NoticeSender } from './notice-settings';
import { outputNames } from './outputs';
import { DEFAULT_REPUTATION, type ReputationSettings, reputationEnvironment } from './reputation-settings';
import { type TracingSettings, tracingEnvironment } from './tracing-settings';

type ItemAction =
  | 'dynamodb:Query'
  | 'dynamodb:GetItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:BatchWriteItem';

/**
 * What relaying a table's outbox takes: UpdateItem (DELETE the relayed events, then REMOVE the index keys) and,
 * where deletions leave tombstones, DeleteItem of the tombstone once its events are out.
 */
/** A tenant table the API serves: listed per tenant (Query on the table), read, written and deleted by key. */
const TENANT_ITEMS: readonly ItemAction[] = [
  'dynamodb:GetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
];
const RELAY: readonly ItemAction[] = ['dynamodb:UpdateItem'];
/** The per-email ordering lanes' items in the deliveries table (adapters/dynamodb/order-lanes). */
const ORDER_LANES = `${LANE_PREFIX}*`;
const RELAY_TOMBSTONES: readonly ItemAction[] = ['dynamodb:UpdateItem', 'dynamodb:DeleteItem'];
/** The reputation table's counters (`c#…`: ADDs of sent copies, bounces, complaints) and standings (`s#…`), adapters/dynamodb/reputation. */
const REPUTATION_COUNTERS = 'c#*';
/** The counters table's filtered-event counters (`filtered#…`: ADD only), adapters/dynamodb/filtered-counts. */
const FILTERED_COUNTERS: TableAccess = { items: ['dynamodb:UpdateItem'], leadingKeys: [`${FILTERED_PREFIX}*`] };
const REPUTATION_STANDINGS = 's#*';
/**
 * What processing an event does to the reputation table (app/reputation/track-reputation): a bounce or complaint
 * is counted (UpdateItem ADD on a counter); a hard bounce or complaint then reads the window's counters (Query per shard) and the tenant's
 * standings (Query), and notes a warning or pause with its event in the standing's outbox, clears it once fanned
 * out, or ends a warning (UpdateItem of a standing). Those two kinds of item only.
 */
const JUDGE_REPUTATION: TableAccess = {
  partitions: [
    { items: ['dynamodb:Query', 'dynamodb:UpdateItem'], leadingKeys: [REPUTATION_COUNTERS, REPUTATION_STANDINGS] },
  ],
};

/**
 * `read`: reads on the table and Query on its manifest indexes. `readWrite`: also PutItem and UpdateItem on the
 * table. An object grants exactly what it lists: `read` (the reads above), `write` (PutItem, UpdateItem),
 * `items` (these item actions on the table itself; a conditional write needs no read), `query` (Query on the
 * named indexes only), and `leadingKeys`: the item actions only on items whose partition key matches one of these
 * patterns (IAM's dynamodb:LeadingKeys), for a function that may touch one kind of item of a shared table;
 * `partitions`: more such grants, each its own statement (other actions on other kinds of item of the table).
 */
type TableAccess =
  | 'none'
  | 'read'
  | 'readWrite'
  | {
      readonly read?: true;
      readonly write?: true;
      readonly items?: readonly ItemAction[];
      readonly query?: readonly string[];
      readonly leadingKeys?: readonly string[];
      readonly partitions?: readonly {
        readonly items: readonly ItemAction[];
        readonly leadingKeys: readonly string[];
      }[];
      /** Item actions that may touch only these attributes (the key's included) and return no others. */
      readonly attributes?: { readonly items: readonly ItemAction[]; readonly names: readonly string[] };
    };

type FunctionName = 'api' | 'authorizer' | 'dispatcher' | 'delivery' | 'reconciler' | 'sender' | 'sesEvents';

/**
 * What each function may do to each table. Keyed by every manifest table, so adding a table does not
 * compile until someone decides who may touch it. (Domains and contacts are decided ahead of the manifest.)
 */
type Access = Readonly<Record<TableName | 'domains' | 'contacts', TableAccess>>;

const tableAccess: Readonly<Record<FunctionName, Access>> = {
  // accounts: read, and the address for notices only; plans and usage keys are changed by the admin CLI.
  api: {
    // Each table gets the item actions its repositories issue for the API's routes (lambdas/adapters/dynamodb),
    // Query on the table where a route lists a tenant's items, and only the indexes a route queries.
    // The caller's key and account are looked up by key (the fallback routes authenticate too). The dashboard's
    // settings page sets or removes the account's address for notices: an UpdateItem of that attribute only, so
    // the plan and usage key stay the admin CLI's.
    accounts: {
      items: ['dynamodb:GetItem'],
      // noticeEmail: the settings page; awsExternalId: made once, on the account's first AWS destination.
      attributes: { items: ['dynamodb:UpdateItem'], names: ['id', 'noticeEmail', 'awsExternalId'] },
    },
    // Keys are listed by account (byAccount) and revoked with an UpdateItem; never deleted.
    apiKeys: { items: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], query: ['byAccount'] },
    // Rate-limit windows and monthly quotas: one UpdateItem (ADD) each, and a window counted on several items
    // reads the others' counts (BatchGetItem); GET /v1/usage reads the quota counters.
    rateLimits: { items: ['dynamodb:UpdateItem', 'dynamodb:GetItem', 'dynamodb:BatchGetItem'] },
    // Listed per tenant (Query on the table), read by key, created, updated and deleted (DELETE /v1/webhooks/:id).
    // No BatchGetItem: only the delivery worker reads webhooks many at once.
    webhooks: { items: TENANT_ITEMS },
    // Test sends and manual retries make their attempt in the request and record it; the delivery log lists
    // by webhook (table), failed (byStatusKey) and pending (byDueShard) rows; recovery jobs are stored, read and
    // canceled here (PutItem, GetItem, UpdateItem). GET /v1/emails/:id/deliveries reads the deliveries whose keys
    // it derives (events × webhooks) with BatchGetItem, as a failed page's rows are read.
    deliveries: { read: true, write: true, query: ['byStatusKey'] },
    // Emails are read and changed by id, a batch stored with BatchWriteItem; GET /v1/emails lists a tenant's
    // ids newest first (byTenant) and reads that page's emails with BatchGetItem.
    emails: {
      items: [
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:BatchWriteItem',
      ],
      query: ['byTenant'],
    },
    // Accepting an email writes its body and links once (BatchWriteItem); reading one reads its body (GetItem)
    // and its links and recipient states (Query on the table); the API never changes a recipient.
    emailParts: { items: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchWriteItem'] },
    // GET /v1/emails/:id reads the newest events of the history (Query on the table for events whose id orders
    // them by time, on byTime for the others); ?status= reads a page of the status index (byStatus); a cancel
    // notes the email's status item (its rank read, then a conditional UpdateItem). The API never writes events.
    emailEvents: {
      items: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:Query'],
      query: ['byTime', 'byStatus'],
    },
    // Idempotency-Key records: claimed, completed, replayed, released on failure (DeleteItem).
    idempotency: { items: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] },
    // One-click unsubscribe suppresses with a conditional UpdateItem that records email.unsubscribed (the
    // outbox), relayed at once (UpdateItem); outside the 30 days, a PutItem. /v1/suppressions reads by key
    // (BatchGetItem, as a send's check), lists a tenant's shards (Query on the table), adds (PutItem, or an
    // UpdateItem with suppression.added) and removes (DeleteItem, or a tombstone's UpdateItem with
    // suppression.removed, deleted once relayed).
    suppressions: {
      items: [
        'dynamodb:BatchGetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
      ],
    },
    // Listed per tenant (Query on the table, no index), read by key, created, updated; deleting leaves a
    // tombstone, and a domain's name claim is released with DeleteItem.
    domains: { items: TENANT_ITEMS },
    // Contacts are created through their outbox (a conditional UpdateItem), never put.
    contacts: { items: TENANT_ITEMS.filter((action) => action !== 'dynamodb:PutItem') },
    // Dashboard sign-in links are redeemed (UpdateItem, conditional), sessions created, read, switched between
    // modes and deleted at sign-out, all by key. (The admin CLI writes the links, with its own credentials.)
    sessions: {
      items: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
    },
    // Each keyed request's entry (one PutItem after it is answered); GET /v1/logs queries the tenant's newest,
    // GET /v1/logs/:id reads one by key.
    apiRequests: { items: ['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:GetItem'] },
    // Listen sessions: opened (PutItem, after a Query of the account's sessions for the cap), found and kept alive
    // by each poll (one conditional UpdateItem), ended (DeleteItem); a poll reads its events (Query on the table).
    // GET /v1/emails/receiving lists a tenant's received emails (Query on the table) and reads one by key; the API
    // never writes them (the SMTP server locally, the inbound function on AWS do).
    inboundEmails: { items: ['dynamodb:GetItem', 'dynamodb:Query'] },
    listenSessions: { items: ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] },
    // Templates (adapters/dynamodb/templates.ts): records, alias claims and versions read by key (a send by template
    // reads its published version), put (conditionally), listed and counted per tenant (Query on the table), and
    // deleted one by one; never updated in place (a record is replaced whole, on its revision).
    templates: { items: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:Query'] },
    // A send reads the tenant's reputation standings (a paused one is refused); GET /v1/emails/metrics queries the
    // counters of a range and the standings. The API never writes them (the event processors and the admin CLI do).
    reputation: { items: ['dynamodb:Query'] },
  },
  // The authorizer looks the key up by its hash and reads its account: two GetItems, nothing else.
  authorizer: {
    accounts: { items: ['dynamodb:GetItem'] },
    apiKeys: { items: ['dynamodb:GetItem'] },
    rateLimits: 'none',
    webhooks: 'none',
    deliveries: 'none',
    emails: 'none',
    emailParts: 'none',
    emailEvents: 'none',
    idempotency: 'none',
    suppressions: 'none',
    domains: 'none',
    contacts: 'none',
    sessions: 'none',
    apiRequests: 'none',
    inboundEmails: 'none',
    listenSessions: 'none',
    templates: 'none',
    reputation: 'none',
  },
  // The events consumer: reads the tenant's webhooks for the fan-out (the delivery rows are created by the
  // worker from the job's seed; an ordered webhook's enters its email's lane first), records each event in its email's history with one conditional PutItem and
  // notes the status it gives with one conditional UpdateItem of the email's status item when the rank it reads
  // there is lower (the email item itself
  // is never touched), and suppresses the recipient of a hard bounce or complaint with
  // one conditional PutItem.
  dispatcher: {
    accounts: 'none',
    apiKeys: 'none',
    // The events a webhook's filter kept back: one ADD per webhook per batch on its hour's counter (filtered#…).
    rateLimits: FILTERED_COUNTERS,
    // The fan-out lists the tenant's webhooks: one Query on the table.
    webhooks: { items: ['dynamodb:Query'] },
    // An ordered webhook's delivery enters its email's lane (an UpdateItem of the `ord#` item) before its job is
    // queued; the rows themselves are the delivery worker's.
    deliveries: { items: ['dynamodb:UpdateItem'], leadingKeys: [ORDER_LANES] },
    emails: 'none',
    emailParts: 'none',
    // The status note reads the noted rank first (GetItem) and writes only a higher one.
    emailEvents: { items: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'] },
    idempotency: 'none',
    // With the suppressionEvents stored format, an UpdateItem that records suppression.added (its relay is the
    // reconciler's: the dispatcher has no events queue).
    suppressions: { items: ['dynamodb:PutItem', 'dynamodb:UpdateItem'] },
    domains: 'none',
    contacts: 'none',
    sessions: 'none',
    apiRequests: 'none',
    // The fan-out reads the account's live listen sessions (one Query) and puts each event on those that take it.
    inboundEmails: 'none',
    listenSessions: { items: ['dynamodb:Query', 'dynamodb:PutItem'] },
    templates: 'none',
    reputation: JUDGE_REPUTATION,
  },
  // The delivery worker reads the job's webhook by key (one or many), creates or claims the delivery row and
  // records each attempt. A recovery job's step reads a page of the webhook's log (Query on the table, or on
  // byStatusKey for failed rows only) and stores the job's progress (PutItem).
  delivery: {
    accounts: 'none',
    apiKeys: 'none',
    // A paced webhook's start is taken on its pace item (one conditional UpdateItem, never a read:
    // adapters/dynamodb/pace-counter.ts); unpaced webhooks never touch the table.
    rateLimits: { items: ['dynamodb:UpdateItem'] },
    // Auto-disable (app/webhooks/endpoint-watch) keeps a failure streak on the webhook item and disables it with
    // conditional UpdateItems, and fans webhook.disabled / webhook.failing out to the tenant's webhooks (Query).
    webhooks: { items: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem', 'dynamodb:Query'] },
    deliveries: {
      items: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query'],
      query: ['byStatusKey'],
    },
    emails: 'none',
    emailParts: 'none',
    emailEvents: 'none',
    idempotency: 'none',
    suppressions: 'none',
    domains: 'none',
    contacts: 'none',
    sessions: 'none',
    apiRequests: 'none',
    inboundEmails: 'none',
    listenSessions: 'none',
    templates: 'none',
    reputation: 'none',
  },
  // Finds overdue pending attempts (byDueShard) and overdue scheduled sends (byScheduleShard) and queues them again;
  // re-checks pending domains (byPending) and stores a changed status with a conditional UpdateItem; sweeps
  // every outbox (byOutboxEvents) and relays what it finds (RELAY).
  reconciler: {
    accounts: 'none',
    apiKeys: 'none',
    rateLimits: 'none',
    webhooks: 'none',
    deliveries: { query: ['byDueShard'] },
    emails: { query: ['byScheduleShard', 'byOutboxEvents'], items: RELAY },
    emailParts: { query: ['byOutboxEvents'], items: RELAY },
    emailEvents: 'none',
    idempotency: 'none',
    // A removed suppression's tombstone goes once its suppression.removed is relayed.
    suppressions: { query: ['byOutboxEvents'], items: RELAY_TOMBSTONES },
    domains: { query: ['byPending', 'byOutboxEvents'], items: ['dynamodb:GetItem', ...RELAY_TOMBSTONES] },
    contacts: { query: ['byOutboxEvents'], items: RELAY_TOMBSTONES },
    sessions: 'none',
    apiRequests: 'none',
    // Received emails' email.received events the inbound function could not relay (byOutboxEvents).
    inboundEmails: { query: ['byOutboxEvents'], items: RELAY },
    listenSessions: 'none',
    templates: 'none',
    // account.reputation_warning events an event processor noted and could not fan out (only standings hold them).
    reputation: { query: ['byOutboxEvents'], partitions: [{ items: RELAY, leadingKeys: [REPUTATION_STANDINGS] }] },
  },
  // The send worker: reads the email, starts it and claims and settles each recipient with conditional
  // UpdateItems (their email.failed / email.suppressed in its outbox, relayed with UpdateItem), and skips
  // recipients suppressed meanwhile (BatchGetItem); aborts a batch its request left undecided (PutItem of the
  // batch's decision, conditional); abandons the id of a single email its request never stored, and puts an email
  // whose send is left for later in the schedule index (conditional PutItem and UpdateItem). Its own email.sent is
  // processed where it arises, as the dispatcher would: the tenant's webhooks (Query), the history and status
  // note, the account's listen sessions.
  sender: {
    accounts: 'none',
    apiKeys: 'none',
    // email.sent filtered from a webhook is counted as the dispatcher counts (filtered#… counters only).
    rateLimits: FILTERED_COUNTERS,
    webhooks: { items: ['dynamodb:Query'] },
    // Per-email ordering: a copy's email.sent enters its lanes before the hand-over, leaves them if the copy was
    // not taken, and its fan-out enters them again (UpdateItems of `ord#` items only; no row is read or written).
    deliveries: { items: ['dynamodb:UpdateItem'], leadingKeys: [ORDER_LANES] },
    emails: { items: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
    // The body (GetItem), links and states (Query on the table); each recipient's state and its events (UpdateItem).
    emailParts: { items: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'] },
    // email.sent in the history (PutItem); the status note reads the noted rank (GetItem), writes a higher one; a
    // message received again reads claimed copies' own email.sent by key (BatchGetItem).
    emailEvents: { items: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem'] },
    idempotency: 'none',
    // The suppression check of a send: one BatchGetItem by key.
    suppressions: { items: ['dynamodb:BatchGetItem'] },
    // The sender domain's open and click tracking picks the configuration set: GetItem by key, once a minute.
    domains: { items: ['dynamodb:GetItem'] },
    contacts: 'none',
    sessions: 'none',
    apiRequests: 'none',
    inboundEmails: 'none',
    // email.sent goes to the account's live listen sessions (one Query, a PutItem per session that takes it).
    listenSessions: { items: ['dynamodb:Query', 'dynamodb:PutItem'] },
    templates: 'none',
    // The copies a batch sent are counted (UpdateItem ADD of counters, one per tenant, day and domain: they never
    // raise a rate, so no judgment here); an email queued before its tenant was paused reads the standings before
    // its copies go (Query).
    reputation: {
      partitions: [
        { items: ['dynamodb:UpdateItem'], leadingKeys: [REPUTATION_COUNTERS] },
        { items: ['dynamodb:Query'], leadingKeys: [REPUTATION_STANDINGS] },
      ],
    },
  },
  // The SES event mapper maps from the message tags (whose email an event is about, and its own tags when they
  // fit), then processes the events where they arrive, as the dispatcher does: the dispatcher's access, and a read
  // of the email for tags that did not fit.
  sesEvents: {
    accounts: 'none',
    apiKeys: 'none',
    rateLimits: FILTERED_COUNTERS,
    webhooks: { items: ['dynamodb:Query'] },
    deliveries: { items: ['dynamodb:UpdateItem'], leadingKeys: [ORDER_LANES] },
    // An email whose own tags did not fit SES's message tags (adapters/ses/tags) is read by id for them: GetItem.
    emails: { items: ['dynamodb:GetItem'] },
    emailParts: 'none',
    emailEvents: { items: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'] },
    idempotency: 'none',
    // A bounce's suppression.added is recorded (UpdateItem) and relayed at once (UpdateItem of the outbox).
    suppressions: { items: ['dynamodb:PutItem', 'dynamodb:UpdateItem'] },
    domains: 'none',
    contacts: 'none',
    sessions: 'none',
    apiRequests: 'none',
    inboundEmails: 'none',
    listenSessions: { items: ['dynamodb:Query', 'dynamodb:PutItem'] },
    templates: 'none',
    // Bounces and complaints arrive here: counted and judged as the dispatcher does.
    reputation: JUDGE_REPUTATION,
  },
};

/**
 * The functions where an account's notice arises: a reputation warning or pause is judged where bounces and
 * complaints are processed (dispatcher, SES mapper); a webhook is auto-disabled where attempts are made (delivery
 * worker; the API's test sends and manual retries, which the public function's dashboard makes too, on its role).
 */
const NOTIFYING = ['api', 'dispatcher', 'delivery', 'sesEvents'] as const satisfies readonly FunctionName[];
/** The day's claim of a notice (app/notices/notify): a counter item of the rateLimits table, `notice#…` only. */
const NOTICE_CLAIMS = 'notice#*';
/** What a notice takes beyond each function's own access (tableAccess), granted only on a stage with a sender. */
const NOTICE_ACCESS: Readonly<Record<(typeof NOTIFYING)[number], Partial<Access>>> = {
  // The API reads accounts and updates rateLimits items already.
  api: {},
  dispatcher: {
    accounts: { items: ['dynamodb:GetItem'] },
    rateLimits: { partitions: [{ items: ['dynamodb:UpdateItem'], leadingKeys: [NOTICE_CLAIMS] }] },
  },
  // The delivery worker updates rateLimits items already (pace items); it reads the account.
  delivery: { accounts: { items: ['dynamodb:GetItem'] } },
  sesEvents: {
    accounts: { items: ['dynamodb:GetItem'] },
    rateLimits: { partitions: [{ items: ['dynamodb:UpdateItem'], leadingKeys: [NOTICE_CLAIMS] }] },
  },
};

/**
 * The inbound function (a stage that receives email): receiveEmail reads the name's claim and the domain, counts
 * the bytes it stores on the receiving account's day (its plan by key, one conditional UpdateItem of the counter),
 * and creates the received email (a conditional UpdateItem with its outbox), then relays its email.received.
 */
const inboundAccess: Access = {
  accounts: { items: ['dynamodb:GetItem'] },
  apiKeys: 'none',
  rateLimits: { items: ['dynamodb:UpdateItem'] },
  webhooks: 'none',
  deliveries: 'none',
  emails: 'none',
  emailParts: 'none',
  emailEvents: 'none',
  idempotency: 'none',
  suppressions: 'none',
  domains: { items: ['dynamodb:GetItem'] },
  contacts: 'none',
  sessions: 'none',
  apiRequests: 'none',
  inboundEmails: { items: RELAY },
  listenSessions: 'none',
  templates: 'none',
  reputation: 'none',
};

export interface SendflowApiStackProps extends StackProps {
  /** SSM parameter names holding each table's physical name (from the data stack). */
  readonly tableParameters: Readonly<Record<TableName, string>>;
  /** SSM parameter holding the ARN of the Secrets Manager secret that signs public links (from the data stack). */
  readonly signingSecretParameter: string;
  /** SSM parameter holding the email bodies bucket's name (the data stack's). */
  readonly emailBodiesParameter: string;
  /** API Gateway authorizer result cache, 0–3600 s; a revoked key keeps working for up to this long. */
  readonly authorizerCacheTtlSeconds: number;
  /** Requests per second per client IP without a valid key: WAF on AWS, the app locally (SF_IP_RATE_LIMIT). */
  readonly ipRateLimit?: number;
  readonly logRetention?: RetentionDays;
  /** Who the paging and non-paging topics reach (lib/alarm-settings.ts); buildSendflow refuses a stage with none to page. */
  readonly alarmSubscribers?: AlarmSubscribers;
  /** The account's Lambda quota and the API's, authorizer's and public function's reservations (lib/concurrency.ts). */
  readonly lambdaConcurrency?: LambdaConcurrency;
  /** The stage's default method throttle and the public methods' (lib/api-throttle.ts); DEFAULT_API_THROTTLE when omitted. */
  readonly apiThrottle?: ApiThrottle;
  /** Each SQS consumer's MaximumConcurrency (lib/consumers.ts); the manifest's when omitted. */
  readonly maxConcurrency?: MaxConcurrency;
  /** The SES account's sending rate, emails per second (DEFAULT_SES_MAX_SEND_RATE when omitted). */
  readonly sesMaxSendRate?: number;
  /** Days emails and everything of theirs are kept (SF_EMAIL_RETENTION_DAYS of every function); 30 when omitted. */
  readonly emailRetentionDays?: number;
  /** Auto-disable's window, seconds (the delivery worker's SF_WEBHOOK_DISABLE_AFTER_SECONDS); 5 days when omitted. */
  readonly webhookDisableAfterSeconds?: number;
  /** Serve the API, and so its public links, on this domain too (docs/runbook.md, "Custom domain"). */
  readonly customDomain?: CustomDomainSettings;
  /** Receive email through SES (docs/runbook.md, "Inbound email on AWS"); nothing of it is synthesized without. */
  readonly inbound?: InboundSettings;
  /** Sending reputation: window, minimum volume, thresholds, the event switch (every function's SF_REPUTATION_*). */
  readonly reputation?: ReputationSettings;
  /** How deployments shift traffic to a new version (lib/constructs/deployments.ts); a 10% canary for 5 minutes. */
  readonly deployment?: DeploymentStyle;
  /** SF_STORED_FORMATS of every function: the stage's expand/contract switches (lib/stored-formats.ts). */
  readonly storedFormats?: string;
  /** OpenTelemetry traces (lib/tracing-settings.ts): every function's OTEL_EXPORTER_OTLP_ENDPOINT; off when omitted. */
  readonly tracing?: TracingSettings;
  /** The accounts' notices' sender (`sendflow:noticeFrom`); none: no function may send notices, each is logged. */
  readonly noticeFrom?: NoticeSender;
}

export class SendflowApiStack extends Stack {
  readonly api: RestApi;
  /** Serves the methods behind the authorizer: only requests with a valid key reach it. */
  readonly apiFunction: NodeFunction;
  /** The same code and role for every method without the authorizer (public routes and 404/405 fallbacks). */
  readonly publicFunction: NodeFunction;
  readonly authorizerFunction: NodeFunction;
  readonly pipeline: DeliveryPipeline;
  readonly emails: EmailPipeline;
  readonly monitoring: Monitoring;
  readonly inbound: InboundMail | undefined;
  readonly deployments: Deployments;

  constructor(scope: Construct, id: string, props: SendflowApiStackProps) {
    super(scope, id, props);
    const ttl = props.authorizerCacheTtlSeconds;
    if (!Number.isInteger(ttl) || ttl < 0 || ttl > 3600) {
      throw new Error(`authorizerCacheTtlSeconds must be an integer from 0 to 3600, got ${ttl}`);
    }
    const ipRateLimit = props.ipRateLimit ?? 20;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;

    // Resolved by CloudFormation at deploy time (an SSM parameter type), not looked up at synth.
    const tableNamesByKey = Object.fromEntries(
      tableNames.map((table) => [table, StringParameter.valueForStringParameter(this, props.tableParameters[table])]),
    ) as Record<TableName, string>;
    // The secret's name is generated (it is retained, so a fixed name would collide on redeploy): its full ARN.
    const signingSecretArn = StringParameter.valueForStringParameter(this, props.signingSecretParameter);

    // loadConfig requires every table variable; names are not access, IAM below is.
    const environment = {
      ...Object.fromEntries(tableNames.map((table) => [tableEnvVar(table), tableNamesByKey[table]])),
      SF_AUTH_CACHE_TTL: String(ttl),
      SF_IP_RATE_LIMIT: String(ipRateLimit),
      // Every function that writes an email's items (API, send worker) or its events (dispatcher) dates their TTL.
      SF_EMAIL_RETENTION_DAYS: String(props.emailRetentionDays ?? 30),
      // The `service` dimension of the EMF metrics: the stack name carries the stage, so stages never mix.
      SF_METRICS_SERVICE: this.stackName,
      // Every function judges (or shows, or checks) reputation with the stage's settings (`sendflow:reputation`).
      ...reputationEnvironment(props.reputation ?? DEFAULT_REPUTATION),
      // Stored formats the stage switches away from this release's defaults (expand/contract); none by default.
      ...(props.storedFormats ? { SF_STORED_FORMATS: props.storedFormats } : {}),
      // Traces: only a stage that names an OTLP endpoint exports spans (`sendflow:tracing`); off by default.
      ...tracingEnvironment(props.tracing),
    };

    const maxConcurrency = props.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY;
    const lambdaConcurrency = props.lambdaConcurrency ?? DEFAULT_LAMBDA_CONCURRENCY;
    checkConcurrency(lambdaConcurrency, maxConcurrency, 'sendflow:lambdaConcurrency', props.inbound !== undefined);
    this.pipeline = new DeliveryPipeline(this, 'DeliveryPipeline', {
      environment,
      logRetention,
      maxConcurrency,
      ...(props.webhookDisableAfterSeconds !== undefined
        ? { webhookDisableAfterSeconds: props.webhookDisableAfterSeconds }
        : {}),
    });
    this.emails = new EmailPipeline(this, 'EmailPipeline', {
      environment,
      logRetention,
      eventsQueue: this.pipeline.eventsQueue,
      deliveriesQueue: this.pipeline.deliveriesQueue,
      maxConcurrency,
      sesMaxSendRate: props.sesMaxSendRate ?? DEFAULT_SES_MAX_SEND_RATE,
    });
    // The send worker's and the SES mapper's fan-outs skip a backlog of the deliveries queue, as the dispatcher's.
    this.pipeline.bypassFirstAttempts(this.emails.sender);
    this.pipeline.bypassFirstAttempts(this.emails.sesEvents);

    const apiEnvironment = {
      ...environment,
      // Emails publish their events (simulated sequences included) onto the events queue.
      SF_EVENTS_QUEUE_URL: this.pipeline.eventsQueue.queueUrl,
      // A recovery job's first step goes onto the deliveries queue.
      SF_DELIVERIES_QUEUE_URL: this.pipeline.deliveriesQueue.queueUrl,
      // Emails with scheduled_at become one-shot schedules (or delayed messages) for the send worker.
      ...this.emails.schedulingEnvironment(),
      // Unsubscribe links are signed with the data stack's key, read once per cold start.
      SF_SIGNING_SECRET_ID: signingSecretArn,
      // A listen-session poll answers at once: a waiting one would hold one of the executions reserved below,
      // which every tenant's requests share (the CLI polls again a second later).
      SF_LISTEN_MAX_WAIT_SECONDS: '0',
      // The largest send body whose Lambda event fits 6 MB whatever JSON escaping does to it; the WAF refuses
      // a larger Content-Length with 413 (lambdas/domain/body-ceiling.ts).
      SF_MAX_SEND_BODY_BYTES: String(MAX_SEND_BODY_BYTES),
    };
    this.apiFunction = new NodeFunction(this, 'ApiFunction', {
      entry: 'lambdas/runtime/aws/api.ts',
      description: 'Sendflow API: every /v1 route behind the authorizer',
      serviceName: 'sendflow-api',
      environment: apiEnvironment,
      // Transformations are checked on save, simulated, and run by test sends and manual retries here.
      afterBundling: quickjsWasmBundling,
      timeout: timeouts.api,
      memorySize: 1024,
      logRetention,
      // Its own share of the account's concurrency, so a queue backlog cannot starve the API (and its ceiling).
      reservedConcurrentExecutions: reservation(lambdaConcurrency.api),
    });
    // Every method without the authorizer (the public routes: dashboard, one-click unsubscribe, contact
    // confirmation, the API reference; and the 404/405 fallbacks) runs here instead: the API's code and role (the
    // dashboard is the API, called in process), on a reservation of its own that is also its ceiling. A flood of
    // unauthenticated requests, from however many addresses, is throttled at that ceiling and never takes the
    // executions that requests with a key need: those reach the API function only through the authorizer.
    this.publicFunction = new NodeFunction(this, 'PublicFunction', {
      entry: 'lambdas/runtime/aws/api.ts',
      description: 'Sendflow public routes: dashboard, unsubscribe, confirmation, reference, 404/405 fallbacks',
      serviceName: 'sendflow-public',
      environment: apiEnvironment,
      // The dashboard's webhook settings check and simulate transformations in process.
      afterBundling: quickjsWasmBundling,
      timeout: timeouts.api,
      memorySize: 1024,
      logRetention,
      role: this.apiFunction.role,
      reservedConcurrentExecutions: reservation(lambdaConcurrency.public),
    });
    /** Both run the API's code: every variable and grant below goes to both (the role is one). */
    const apiFunctions = [this.apiFunction, this.publicFunction];
    this.authorizerFunction = new NodeFunction(this, 'AuthorizerFunction', {
      entry: 'lambdas/runtime/aws/authorizer.ts',
      description: 'Sendflow REQUEST authorizer: Bearer API key to principal and usage-plan key',
      serviceName: 'sendflow-authorizer',
      environment,
      timeout: timeouts.authorizer,
      memorySize: 512,
      logRetention,
      reservedConcurrentExecutions: reservation(lambdaConcurrency.authorizer),
    });
    allowSend(this.apiFunction.role, this.pipeline.eventsQueue, this.pipeline.deliveriesQueue);
    this.emails.grantScheduling(this.apiFunction);
    this.apiFunction.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        // The full ARN (with Secrets Manager's random suffix): exactly that secret.
        resources: [signingSecretArn],
      }),
    );

    // Email bodies too large to keep inline: the API writes and reads them, the send worker reads them. Only their
    // objects, under both keys an object may have: retention/emails/<id>/… (expires within the retention) and
    // emails/<id>/… (scheduled past it, or written before the prefix); only these actions (HeadObject is GetObject).
    const bodiesBucket = StringParameter.valueForStringParameter(this, props.emailBodiesParameter);
    const retainedPrefix = `${RETENTION_PREFIX}${EMAIL_OBJECTS_PREFIX}`;
    const grantBodyObjects = (
      fn: NodeFunction,
      actions: readonly string[],
      prefixes: readonly string[] = [retainedPrefix, EMAIL_OBJECTS_PREFIX],
    ) => {
      fn.handler.addEnvironment('SF_EMAIL_BODIES_BUCKET', bodiesBucket);
      fn.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: [...actions],
          resources: prefixes.map((prefix) => `arn:${Aws.PARTITION}:s3:::${bodiesBucket}/${prefix}*`),
        }),
      );
      for (const prefix of prefixes) {
        Validations.of(fn.role).acknowledge({
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::<${(this.resolve(bodiesBucket) as { Ref: string }).Ref}>/${prefix}*]`,
          reason:
            'One object per email under emails/<email id>/ or retention/emails/<email id>/, named at run time: the ' +
            'policy names the bucket and those prefixes, never the bucket itself or another prefix.',
        });
      }
    };
    for (const fn of apiFunctions) grantBodyObjects(fn, ['s3:PutObject', 's3:GetObject']);
    // A test-mode email's attachments are tagged for the bucket's one-day rule (under retention/ only: they expire
    // within the retention), which IAM authorizes as s3:PutObjectTagging. Only the API function accepts emails.
    grantBodyObjects(this.apiFunction, ['s3:PutObjectTagging'], [retainedPrefix]);
    grantBodyObjects(this.emails.sender, ['s3:GetObject']);

    // AWS destinations (docs/webhooks.md, "AWS destinations"): the delivery worker (and the API, for test sends and
    // manual retries) assume customers' roles, in any account, but only with an external id (sts:ExternalId
    // present): the confused-deputy defence. Customers' trust policies name this account with their own external
    // id (SF_AWS_TRUST_PRINCIPAL, shown with each AWS webhook).
    const trustPrincipal = `arn:${Aws.PARTITION}:iam::${Aws.ACCOUNT_ID}:root`;
    for (const fn of [this.pipeline.delivery, this.apiFunction]) {
      fn.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['sts:AssumeRole'],
          resources: [`arn:${Aws.PARTITION}:iam::*:role/*`],
          conditions: { Null: { 'sts:ExternalId': 'false' } },
        }),
      );
      Validations.of(fn.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:iam::*:role/*]',
        reason:
          "Customers' roles, in their own accounts, are named at run time by their webhooks; only with an external " +
          'id (Null sts:ExternalId false), which their trust policies require.',
      });
    }
    for (const fn of [...apiFunctions, this.pipeline.delivery])
      fn.handler.addEnvironment('SF_AWS_TRUST_PRINCIPAL', trustPrincipal);

    // Live mode sends through SES with our configuration set, from the send worker only: the API stores and
    // queues every email. Domains are SES identities with Easy DKIM: the API adds, reads and deletes them.
    this.emails.grantSending(this.emails.sender);
    for (const fn of apiFunctions) {
      this.emails.grantIdentities(fn, ['ses:CreateEmailIdentity', 'ses:GetEmailIdentity', 'ses:DeleteEmailIdentity']);
    }

    // The reconciler also re-queues overdue scheduled sends: the sends queue is enough (they are due now).
    const { reconciler } = this.pipeline;
    reconciler.handler.addEnvironment('SF_SENDS_QUEUE_URL', this.emails.sendsQueue.queueUrl);
    allowSend(reconciler.role, this.emails.sendsQueue);
    // It also re-checks pending domains with SES (read only) and announces a change (domain.updated).
    reconciler.handler.addEnvironment('SF_EVENTS_QUEUE_URL', this.pipeline.eventsQueue.queueUrl);
    allowSend(reconciler.role, this.pipeline.eventsQueue);
    this.emails.grantIdentities(reconciler, ['ses:GetEmailIdentity']);

    const functions: Record<FunctionName, NodeFunction> = {
      api: this.apiFunction,
      authorizer: this.authorizerFunction,
      dispatcher: this.pipeline.dispatcher,
      delivery: this.pipeline.delivery,
      reconciler,
      sender: this.emails.sender,
      sesEvents: this.emails.sesEvents,
    };
    for (const [name, fn] of Object.entries(functions) as [FunctionName, NodeFunction][]) {
      for (const table of tableNames) {
        grantTable(this, fn.role, table, tableNamesByKey[table], tableAccess[name][table]);
      }
    }
    if (props.noticeFrom) {
      this.grantNotices(props.noticeFrom, functions, tableNamesByKey);
    }

    this.api = this.restApi(logRetention, props.apiThrottle ?? DEFAULT_API_THROTTLE);
    // Public links point at the custom domain when there is one: it outlives this stack's execute-api host.
    // Otherwise at the stage URL, built from the API id alone: the stage (this.api.url) depends on the
    // deployment, which depends on the methods, which depend on this function: that would be a cycle.
    const customDomain =
      props.customDomain && new ApiCustomDomain(this, 'CustomDomain', { ...props.customDomain, api: this.api });
    const publicUrl =
      customDomain?.url ??
      Fn.join('', ['https://', this.api.restApiId, '.execute-api.', Aws.REGION, '.', Aws.URL_SUFFIX, `/${STAGE}`]);
    for (const fn of apiFunctions) {
      fn.handler.addEnvironment('SF_PUBLIC_URL', publicUrl);
      // Revoking a key flushes the stage's authorizer cache, so the key stops working at once, not after the TTL.
      fn.handler.addEnvironment('SF_REST_API_ID', this.api.restApiId);
    }
    this.apiFunction.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['apigateway:DELETE'],
        resources: [
          Fn.join('', [
            'arn:',
            Aws.PARTITION,
            ':apigateway:',
            Aws.REGION,
            '::/restapis/',
            this.api.restApiId,
            `/stages/${STAGE}/cache/authorizers`,
          ]),
        ],
      }),
    );
    const authorizer = new RequestAuthorizer(this, 'Authorizer', {
      handler: this.authorizerFunction.live,
      // Cache key: the key itself. The policy is a wildcard Allow, so a cached answer is valid on every route.
      identitySources: [IdentitySource.header('Authorization')],
      resultsCacheTtl: Duration.seconds(ttl),
    });
    // One invoke permission for the whole API instead of one per method: a function's resource policy is
    // capped at 20 KB, which a per-method permission for every route and fallback would soon exceed.
    // Both invoke the `live` aliases, which CodeDeploy shifts between versions (lib/constructs/deployments.ts).
    const integration = new LambdaIntegration(this.apiFunction.live, {
      proxy: true,
      scopePermissionToMethod: false,
    });
    const publicIntegration = new LambdaIntegration(this.publicFunction.live, {
      proxy: true,
      scopePermissionToMethod: false,
    });

    for (const route of routes as readonly RouteSpec[]) {
      const resource = this.api.root.resourceForPath(route.path);
      if (route.access === 'public') {
        const method = resource.addMethod(route.method, publicIntegration, {
          operationName: route.id,
          authorizationType: AuthorizationType.NONE,
          apiKeyRequired: false,
        });
        acknowledgeOpenMethod(method, `${route.id} is a public route by design (manifest access 'public').`);
      } else {
        const method = resource.addMethod(route.method, integration, {
          operationName: route.id,
          authorizationType: AuthorizationType.CUSTOM,
          authorizer,
          apiKeyRequired: true,
        });
        Validations.of(method).acknowledge({
          id: 'AwsSolutions-COG4',
          reason:
            'Callers are systems holding Sendflow API keys, not Cognito users: the Lambda REQUEST authorizer ' +
            'verifies the key hash in DynamoDB and returns the usage-plan key (DESIGN §3).',
        });
      }
    }

    // 404 and 405 in our JSON shape, with rate-limit headers, come from the API code (the public function, as every
    // method without the authorizer): API Gateway prefers
    // an explicit method over ANY on the same resource, so ANY only catches methods a route does not declare
    // (the Lambda answers 405 with Allow), and {proxy+} on the root only catches paths no resource matches
    // (404). No authorizer on them: a wrong method or path is not an authentication failure; the Lambda
    // still authenticates the caller to charge the right window.
    const fallbackPaths = new Set(['/']);
    for (const route of routes) {
      const segments = route.path.split('/').filter(Boolean);
      for (let i = 1; i <= segments.length; i++) fallbackPaths.add(`/${segments.slice(0, i).join('/')}`);
    }
    const fallbacks = [...fallbackPaths].map((path) => this.api.root.resourceForPath(path));
    fallbacks.push(this.api.root.addResource('{proxy+}'));
    for (const resource of fallbacks) {
      const method = resource.addMethod('ANY', publicIntegration, {
        operationName: 'fallback',
        authorizationType: AuthorizationType.NONE,
        apiKeyRequired: false,
      });
      acknowledgeOpenMethod(method, 'Fallback for undeclared methods and paths: the API Lambda answers 404/405.');
    }

    addGatewayResponses(this.api);

    const plans = PLAN_NAMES.map((name) => {
      const plan = PLANS[name];
      const usagePlan = this.api.addUsagePlan(`UsagePlan${pascal(name)}`, {
        name: `${this.stackName}-${name}`,
        description: `Sendflow ${name} plan: ${plan.requestsPerSecond} requests per second`,
        throttle: { rateLimit: plan.requestsPerSecond, burstLimit: plan.burst },
        apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
      });
      return { name, usagePlan };
    });

    new ApiFirewall(this, 'Firewall', {
      stage: this.api.deploymentStage,
      anonymousRequestsPerSecond: ipRateLimit,
      requestsPerSecondPerIp: 2 * Math.max(...PLAN_NAMES.map((name) => PLANS[name].requestsPerSecond)),
      linkRequestsPerSecond: ipRateLimit * PUBLIC_ROUTE_IP_FACTOR,
      maxBodyBytes: MAX_SEND_BODY_BYTES,
    });

    // Outputs for the admin CLI (lib/outputs.ts). Plain outputs, no exports: nothing may pin these values.
    // RestApi's own `Endpoint` output would duplicate ApiUrl under a hashed name; ApiUrl is the documented one.
    this.api.node.tryRemoveChild('Endpoint');
    output(this, outputNames.apiUrl, this.api.url, 'Base URL of the API, including the stage');
    output(this, outputNames.restApiId, this.api.restApiId, 'REST API id (authorizer cache flushes)');
    for (const table of tableNames) {
      output(this, outputNames.tables[table], tableNamesByKey[table], `Physical name of the ${table} table`);
    }
    for (const { name, usagePlan } of plans) {
      output(this, outputNames.usagePlans[name], usagePlan.usagePlanId, `Usage plan id of the ${name} plan`);
    }
    const { pipeline } = this;
    output(this, outputNames.queues.events, pipeline.eventsQueue.queueUrl, 'URL of the events queue');
    output(this, outputNames.queues.deliveries, pipeline.deliveriesQueue.queueUrl, 'URL of the deliveries queue');
    output(this, outputNames.queues.sends, this.emails.sendsQueue.queueUrl, 'URL of the sends queue');
    output(
      this,
      outputNames.queues.providerEvents,
      this.emails.providerEventsQueue.queueUrl,
      'URL of the provider-events queue (SES events from EventBridge)',
    );
    output(
      this,
      outputNames.sesConfigurationSet,
      this.emails.configurationSetName,
      'SES configuration set every live-mode email is sent with',
    );
    const deadLetters = {
      events: pipeline.eventsDlq,
      deliveries: pipeline.deliveriesDlq,
      retrySchedules: pipeline.retryScheduleDlq,
      reconcileSchedule: pipeline.reconcileScheduleDlq,
      sends: this.emails.sendsDlq,
      sendSchedules: this.emails.sendScheduleDlq,
      providerEvents: this.emails.providerEventsDlq,
      slowDeliveries: pipeline.slowDeliveriesDlq,
    } as const;
    for (const [name, dlq] of Object.entries(deadLetters) as [keyof typeof deadLetters, typeof pipeline.eventsDlq][]) {
      output(this, outputNames.deadLetterQueues[name], dlq.queueUrl, `URL of the ${name} dead-letter queue`);
    }

    // Before Monitoring, so notifyAll reaches its alarms. receiveEmail (app/inbound) reads who receives at a
    // domain, creates the received email with its email.received in the item's outbox and relays it, and puts the
    // raw message, body and attachments under retention/emails/<rcv id>/ in the bodies bucket (the file store).
    this.inbound =
      props.inbound &&
      new InboundMail(this, 'InboundMail', {
        ...props.inbound,
        environment,
        retentionDays: props.emailRetentionDays ?? 30,
        logRetention,
        reservedConcurrency: reservation(lambdaConcurrency.inbound),
        grantReceiveEmail: (fn) => {
          for (const table of tableNames) {
            grantTable(this, fn.role, table, tableNamesByKey[table], inboundAccess[table]);
          }
          fn.handler.addEnvironment('SF_EVENTS_QUEUE_URL', this.pipeline.eventsQueue.queueUrl);
          allowSend(fn.role, this.pipeline.eventsQueue);
          // A received email expires within the retention from its arrival: its objects go under retention/ only.
          grantBodyObjects(fn, ['s3:PutObject'], [retainedPrefix]);
        },
      });
    // A receiving domain's records name SES's inbound endpoint of the region that receives (its MX record).
    if (props.inbound) {
      for (const fn of apiFunctions) {
        fn.handler.addEnvironment('SF_RECEIVING_MX', `inbound-smtp.${props.inbound.region}.amazonaws.com`);
      }
    }
    if (this.inbound) {
      const { inbound } = this;
      output(this, 'InboundBucketName', inbound.bucket.bucketName, 'Bucket SES stores received messages in (inbound/)');
      output(this, 'InboundRuleSetName', inbound.ruleSetName, 'SES receipt rule set of this stage');
      output(this, 'InboundFunctionName', inbound.handler.handler.functionName, 'Inbound mail function (replays)');
      output(this, 'InboundFailuresQueueUrl', inbound.failures.queueUrl, 'SES events the inbound function gave up on');
    }

    this.monitoring = new Monitoring(this, 'Monitoring', {
      // The inbound function, where there is one, gets the Errors and Throttles alarms and widgets every function has.
      functions: {
        ...functions,
        public: this.publicFunction,
        ...(this.inbound ? { inbound: this.inbound.handler } : {}),
      },
      api: this.api,
      queues: {
        events: pipeline.eventsQueue,
        deliveries: pipeline.deliveriesQueue,
        deliveriesBypass: pipeline.deliveriesBypassQueue,
        slowDeliveries: pipeline.slowDeliveriesQueue,
        sends: this.emails.sendsQueue,
        providerEvents: this.emails.providerEventsQueue,
      },
      // The inbound function's failures queue beside the DLQs on the dashboard (its depth alarm is its own).
      deadLetterQueues: { ...deadLetters, ...(this.inbound ? { inboundFailures: this.inbound.failures } : {}) },
      metricsService: this.stackName,
      subscribers: props.alarmSubscribers ?? NO_SUBSCRIBERS,
      symptoms: {
        deliveriesLate: [...pipeline.ageAlarms, this.emails.providerEventsAgeAlarm],
        sendsLate: [this.emails.sendsAgeAlarm],
        dataLossRisk: [
          ...Object.values(pipeline.deadLetterAlarms),
          ...Object.values(this.emails.deadLetterAlarms),
          ...(this.inbound ? [this.inbound.failuresAlarm, this.inbound.destinationFailuresAlarm] : []),
        ],
      },
      tables: tableNamesByKey,
      indexes: Object.fromEntries(
        tableNames.map((table) => [table, deployedIndexes(this, table, tables[table]).map((index) => index.name)]),
      ),
      accountConcurrencyQuota: lambdaConcurrency.accountQuota,
      // Where reputation is judged: a pause's WARN line there tells the non-paging subscribers.
      reputationLogs: [functions.dispatcher.logGroup, functions.sesEvents.logGroup],
      // Where notices arise: each one not sent (no sender, or SES failed) is a WARN line there, counted.
      noticeLogs: NOTIFYING.map((name) => functions[name].logGroup).concat(this.publicFunction.logGroup),
    });
    // Each function deploys by canary behind its `live` alias, rolled back on its own errors and on the symptom
    // its failure would show first: the API's 5XX, or a dead-lettered message of the queue it consumes.
    const errors = this.monitoring.functionErrors;
    const alarmsOf = (name: string, ...more: Alarm[]) => {
      const own = errors[name];
      if (!own) throw new Error(`no Errors alarm for ${name}`);
      return [own, ...more];
    };
    const dlqAlarms = { ...pipeline.deadLetterAlarms, ...this.emails.deadLetterAlarms };
    this.deployments = new Deployments(this, 'Deployments', {
      style: props.deployment ?? DEFAULT_DEPLOYMENT_STYLE,
      functions: {
        api: { fn: this.apiFunction, alarms: alarmsOf('api', this.monitoring.api5xx) },
        authorizer: { fn: this.authorizerFunction, alarms: alarmsOf('authorizer', this.monitoring.api5xx) },
        public: { fn: this.publicFunction, alarms: alarmsOf('public', this.monitoring.api5xx) },
        dispatcher: { fn: pipeline.dispatcher, alarms: alarmsOf('dispatcher', dlqAlarms.events) },
        delivery: {
          fn: pipeline.delivery,
          alarms: alarmsOf('delivery', dlqAlarms.deliveries, dlqAlarms.slowDeliveries),
        },
        reconciler: { fn: reconciler, alarms: alarmsOf('reconciler', dlqAlarms.reconcileSchedule) },
        sender: { fn: this.emails.sender, alarms: alarmsOf('sender', dlqAlarms.sends) },
        sesEvents: { fn: this.emails.sesEvents, alarms: alarmsOf('sesEvents', dlqAlarms.providerEvents) },
        ...(this.inbound
          ? { inbound: { fn: this.inbound.handler, alarms: alarmsOf('inbound', this.inbound.failuresAlarm) } }
          : {}),
      },
    });
    // Last, so it reaches every alarm the constructs above made.
    this.monitoring.notifyAll();
    output(
      this,
      outputNames.alarmTopic,
      this.monitoring.pagingTopic.topicArn,
      'SNS topic of the paging alarms (a few composite alarms of symptoms): subscribe the pager here',
    );
    output(
      this,
      outputNames.notifyTopic,
      this.monitoring.notifyTopic.topicArn,
      'SNS topic every other alarm notifies (not paging): subscribe a team list or chat here',
    );
  }

  /**
   * The accounts' notices (app/notices, runtime/aws/plugs/ses sesNotices) from the stage's sender: SF_NOTICE_FROM on
   * the functions where they arise, ses:SendEmail on the sender's identity as that From address only, and what
   * sendNotice reads and writes: the account by key (its address) and the day's claim, a counter item `notice#…`
   * of the rateLimits table (the API and the delivery worker already update that table).
   */
  private grantNotices(
    sender: NoticeSender,
    functions: Readonly<Record<FunctionName, NodeFunction>>,
    tableNamesByKey: Readonly<Record<TableName, string>>,
  ): void {
    const identity = this.formatArn({ service: 'ses', resource: 'identity', resourceName: sender.identity });
    for (const name of NOTIFYING) {
      const fn = functions[name];
      fn.handler.addEnvironment('SF_NOTICE_FROM', sender.address);
      fn.role.addToPrincipalPolicy(
        new PolicyStatement({
          actions: ['ses:SendEmail'],
          resources: [identity],
          conditions: { StringEquals: { 'ses:FromAddress': sender.address } },
        }),
      );
      for (const [table, access] of Object.entries(NOTICE_ACCESS[name]) as [TableName, TableAccess][]) {
        grantTable(this, fn.role, table, tableNamesByKey[table], access);
      }
    }
    // The public function runs the API's code with its role (granted above): only the variable is its own.
    this.publicFunction.handler.addEnvironment('SF_NOTICE_FROM', sender.address);
  }

  private restApi(logRetention: RetentionDays, throttle: ApiThrottle): RestApi {
    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: logRetention });
    const api = new RestApi(this, 'Api', {
      restApiName: this.stackName,
      description: 'Sendflow email delivery API',
      endpointTypes: [EndpointType.REGIONAL],
      // The authorizer returns the account's usage-plan key as usageIdentifierKey; clients never send one.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // Execution logging needs the account-wide CloudWatch role; keep it when this stack goes, since
      // every other REST API in the region relies on the same setting.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: STAGE,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.custom(
          JSON.stringify({
            requestId: AccessLogField.contextRequestId(),
            ip: AccessLogField.contextIdentitySourceIp(),
            requestTime: AccessLogField.contextRequestTime(),
            method: AccessLogField.contextHttpMethod(),
            resource: AccessLogField.contextResourcePath(),
            path: AccessLogField.contextPath(),
            status: AccessLogField.contextStatus(),
            responseLength: AccessLogField.contextResponseLength(),
            latency: AccessLogField.contextResponseLatency(),
            integrationLatency: AccessLogField.contextIntegrationLatency(),
            accountId: AccessLogField.contextAuthorizer('accountId'),
            keyId: AccessLogField.contextAuthorizerPrincipalId(),
            errorType: AccessLogField.contextErrorResponseType(),
            wafStatus: AccessLogField.contextWafResponseCode(),
          }),
        ),
        // ERROR keeps execution logs to failures; data tracing stays off because it writes full requests,
        // Authorization header included, to CloudWatch.
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        // Off: detailed metrics are per method (custom metrics billed per method and series, ~390 a stage) and
        // nothing reads them. The stage's basic metrics (Count, 4XX, 5XX, Latency), which alarm, are always on.
        metricsEnabled: false,
        // Every method's limit, all callers together, before any request reaches a function: past it API Gateway
        // answers 429 itself. Usage plans limit each account's key within it.
        throttlingRateLimit: throttle.rateLimit,
        throttlingBurstLimit: throttle.burstLimit,
        // Public methods have no key, so no usage plan: their own, tighter limit each (a method setting replaces
        // the stage's for that method, so it repeats the logging and metrics choices above).
        methodOptions: Object.fromEntries(
          routes
            .filter((route) => route.access === 'public')
            .map((route) => [
              `${route.path}/${route.method}`,
              {
                loggingLevel: MethodLoggingLevel.ERROR,
                dataTraceEnabled: false,
                metricsEnabled: false,
                throttlingRateLimit: throttle.publicRateLimit,
                throttlingBurstLimit: throttle.publicBurstLimit,
              },
            ]),
        ),
        // No code is instrumented for X-Ray: traces would show only the gateway hop, at a price.
        tracingEnabled: false,
      },
    });
    const cloudWatchRole = api.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole) {
      Validations.of(cloudWatchRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          'The account-wide API Gateway logging role serves every REST API in the region, so it needs the ' +
          'AWS-maintained push-to-CloudWatch policy; a policy scoped to this API would break the others.',
      });
    }
    this.executionLogRetention(api, logRetention);
    Validations.of(api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated in the API Lambda with zod, which answers 400/422 in our error shape and behaves ' +
        'identically in the local runtime; API Gateway models would duplicate the schemas with other errors.',
    });
    return api;
  }

  /**
   * The execution log group API Gateway itself creates for the stage (`API-Gateway-Execution-Logs_<api id>/v1`,
   * at its first error line) never expires unless told. A LogRetention custom resource creates it if it does not
   * exist yet and sets the retention, so an existing stage, whose group API Gateway made long ago, is not refused
   * by a create of a group that exists. Its function gets a role of its own without managed policies.
   */
  private executionLogRetention(api: RestApi, retention: RetentionDays): void {
    const logGroupName = Fn.join('', ['API-Gateway-Execution-Logs_', api.restApiId, `/${STAGE}`]);
    const role = new Role(this, 'ExecutionLogRetentionRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: "Sets the retention of the API stage's execution log group (and of its own function's log group)",
    });
    // The handler creates the group when it is missing, and its own function's log group (retention one day) on
    // create: that function's name is generated, and naming it here would make a cycle. It writes no log lines.
    // A log group's ARN, as IAM matches it, may end in `:*`: both forms.
    const groupArn = this.formatArn({
      service: 'logs',
      resource: 'log-group',
      resourceName: logGroupName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['logs:CreateLogGroup'],
        resources: [
          groupArn,
          `${groupArn}:*`,
          this.formatArn({
            service: 'logs',
            resource: 'log-group',
            resourceName: '/aws/lambda/*',
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
    new LogRetention(this, 'ExecutionLogRetention', { logGroupName, retention, role });
    Validations.of(role).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          "CDK's LogRetention function is granted logs:PutRetentionPolicy and logs:DeleteRetentionPolicy on every " +
          'log group, since it also sets the retention of its own log group, whose generated name its role cannot ' +
          'name without a cycle; it runs only when the stack deploys.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:API-Gateway-Execution-Logs_<${this.getLogicalId(api.node.defaultChild as CfnRestApi)}>/${STAGE}:*]`,
        reason:
          "logs:CreateLogGroup only, on the stage's execution log group itself: the `:*` form of its ARN, which IAM " +
          'may match for log-group actions; no other group.',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:/aws/lambda/*]',
        reason:
          'logs:CreateLogGroup only, for the LogRetention function to create its own log group (one day of ' +
          'retention), whose generated name its role cannot name without a cycle.',
      },
    );
  }
}

/**
 * Reads of a table: GetItem, BatchGetItem (tenant-scoped lists and suppression checks) and Query; on its indexes
 * only Query means anything. No Scan, DescribeTable or ConditionCheckItem: no function calls them (the IAM tier,
 * test/iam, records every call each bundle makes and fails on a missing grant).
 */
const READS: readonly ItemAction[] = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
const INDEX_READS = ['dynamodb:Query'];
/** Writes: conditional PutItem and UpdateItem. DeleteItem is granted only where `items` names it. */
const WRITES: readonly ItemAction[] = ['dynamodb:PutItem', 'dynamodb:UpdateItem'];

/** Least-privilege DynamoDB access by table name: the table and its manifest indexes, no wildcards. */
function grantTable(stack: Stack, grantee: IGrantable, table: TableName, name: string, access: TableAccess): void {
  if (access === 'none') return;
  const tableArn = stack.formatArn({ service: 'dynamodb', resource: 'table', resourceName: name });
  const spec: TableSpec = tables[table];
  const allow = (actions: readonly string[], resources: string[], conditions?: Record<string, unknown>) =>
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: [...actions], resources, ...(conditions ? { conditions } : {}) }),
    );
  const indexes = (spec.indexes ?? []).map((index) => `${tableArn}/index/${index.name}`);
  const reads = () => {
    allow(READS, [tableArn]);
    if (indexes.length) allow(INDEX_READS, indexes);
  };
  if (typeof access === 'string') {
    reads();
    if (access === 'readWrite') allow(WRITES, [tableArn]);
    return;
  }
  // In the object form, `read` is the table only: indexes are named in `query`.
  if (access.read) allow(READS, [tableArn]);
  const items = [...(access.write ? WRITES : []), ...(access.items ?? [])];
  const partitions = access.leadingKeys
    ? { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...access.leadingKeys] } }
    : undefined;
  if (items.length) allow([...new Set(items)], [tableArn], partitions);
  for (const scoped of access.partitions ?? []) {
    allow([...new Set(scoped.items)], [tableArn], {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...scoped.leadingKeys] },
    });
  }
  if (access.attributes) {
    allow([...new Set(access.attributes.items)], [tableArn], {
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...access.attributes.names] },
      StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'] },
    });
  }
  if (access.query?.length) {
    const known = new Set((spec.indexes ?? []).map((index) => index.name));
    const unknown = access.query.filter((index) => !known.has(index));
    if (unknown.length) throw new Error(`Table ${table} has no index ${unknown.join(', ')}`);
    allow(
      ['dynamodb:Query'],
      access.query.map((index) => `${tableArn}/index/${index}`),
    );
  }
}

/** Methods without the authorizer: public routes and the 404/405 fallbacks. */
function acknowledgeOpenMethod(method: Method, why: string): void {
  Validations.of(method).acknowledge(
    { id: 'AwsSolutions-APIG4', reason: why },
    { id: 'AwsSolutions-COG4', reason: `${why} No authorizer of any kind applies.` },
  );
}

function output(stack: Stack, name: string, value: string, description: string): void {
  const out = new CfnOutput(stack, name, { value, description });
  out.overrideLogicalId(name);
}

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
