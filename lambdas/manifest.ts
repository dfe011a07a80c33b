// The manifest: routes, tables and functions as plain data. lib/ (CDK) and the local runtime both read it,
// so what deploys and what runs locally cannot drift. Nothing here imports aws-cdk-lib.
import type { Access } from './domain/scopes';

/** The API Gateway stage: it is the `/v1` of every public path (spec §9). */
export const STAGE = 'v1';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteSpec {
  /** Stable operation id: the handler key and the OpenAPI operationId. */
  readonly id: string;
  readonly method: HttpMethod;
  /** API Gateway resource path below the stage, with `{param}` segments; public path is `/v1` + path. */
  readonly path: string;
  readonly access: Access;
  readonly summary: string;
  /** Honours the Idempotency-Key header (kept 24 h). */
  readonly idempotent?: true;
  /** How the body is read: JSON (default), or raw for form posts (one-click unsubscribe). */
  readonly body?: 'json' | 'raw';
  /** Takes bodies up to SF_MAX_SEND_BODY_BYTES (attachments as base64); other routes SF_MAX_BODY_BYTES. */
  readonly largeBody?: true;
  /**
   * A dashboard page (public: the session cookie, not a key, authenticates it; it calls the API in-process).
   * Left out of the OpenAPI document and of the WAF's link rule.
   */
  readonly dashboard?: true;
  /**
   * Holds its request open while it waits (a long-poll): locally it runs in the account's gateway slots like any
   * request and gives its slot back while it waits (app/listen), so the slots bound work, not waiting (on AWS each
   * request is its own invocation anyway).
   */
  readonly longPoll?: true;
}

const read = { scope: 'webhook:read' } as const;
const write = { scope: 'webhook:write' } as const;
const send = { scope: 'email:send' } as const;
const domainRead = { scope: 'domain:read' } as const;

export const routes = [
  {
    id: 'getOpenApi',
    method: 'GET',
    path: '/openapi.json',
    access: 'public',
    summary: 'This API as an OpenAPI 3.1 document',
  },
  {
    id: 'apiReference',
    method: 'GET',
    path: '/reference',
    access: 'public',
    summary: 'The API reference: an HTML page made from the OpenAPI document',
  },
  { id: 'createApiKey', method: 'POST', path: '/api-keys', access: 'full', summary: 'Create an API key' },
  { id: 'listApiKeys', method: 'GET', path: '/api-keys', access: 'full', summary: 'List API keys' },
  { id: 'revokeApiKey', method: 'DELETE', path: '/api-keys/{id}', access: 'full', summary: 'Revoke an API key' },
  { id: 'createWebhook', method: 'POST', path: '/webhooks', access: write, summary: 'Register a webhook endpoint' },
  { id: 'listWebhooks', method: 'GET', path: '/webhooks', access: read, summary: 'List webhook endpoints' },
  { id: 'getWebhook', method: 'GET', path: '/webhooks/{id}', access: read, summary: 'Retrieve a webhook endpoint' },
  {
    id: 'getWebhooksMetrics',
    method: 'GET',
    path: '/webhooks/metrics',
    access: read,
    summary: 'Delivery figures of every webhook per hour: attempts by outcome, failures by class, p50/p95 latency',
  },
  {
    id: 'getWebhookMetrics',
    method: 'GET',
    path: '/webhooks/{id}/metrics',
    access: read,
    summary: "A webhook's delivery figures per hour: attempts by outcome, failures by class, p50/p95 latency",
  },
  { id: 'updateWebhook', method: 'PUT', path: '/webhooks/{id}', access: write, summary: 'Update, pause or resume' },
  {
    id: 'patchWebhook',
    method: 'PATCH',
    path: '/webhooks/{id}',
    access: write,
    summary: "Update, pause or resume (PUT's partial update, as Resend's SDK sends it)",
  },
  { id: 'deleteWebhook', method: 'DELETE', path: '/webhooks/{id}', access: write, summary: 'Delete a webhook' },
  { id: 'testWebhook', method: 'POST', path: '/webhooks/{id}/test', access: write, summary: 'Send a test event' },
  // Issue 32: a filter tried on an event; stores nothing and reads nothing of the account.
  {
    id: 'testWebhookFilter',
    method: 'POST',
    path: '/webhooks/filter-test',
    access: read,
    summary: 'Try a payload filter on an event: whether it matches, and which clause failed',
  },
  // Issue 32: the request a webhook's transformation (or one given to try) makes of an event; sends and stores nothing.
  {
    id: 'simulateWebhookTransformation',
    method: 'POST',
    path: '/webhooks/{id}/transformation/simulate',
    access: read,
    summary: "Run a webhook's transformation on an event: the request an attempt would make, or its error",
  },
  // Listen sessions (`npm run listen`, docs/webhooks.md "Listen on your laptop"): the CLI pulls the events a webhook
  // would get; the webhook scope that creates webhooks opens, polls and ends them.
  {
    id: 'createListenSession',
    method: 'POST',
    path: '/listen-sessions',
    access: write,
    summary: 'Open a listen session: pull live events with no public URL',
  },
  {
    id: 'pollListenSession',
    method: 'GET',
    path: '/listen-sessions/{id}/events',
    access: write,
    summary: "A listen session's next events (long-poll, up to 20 s)",
    longPoll: true,
  },
  {
    id: 'deleteListenSession',
    method: 'DELETE',
    path: '/listen-sessions/{id}',
    access: write,
    summary: 'End a listen session',
  },
  {
    id: 'listDeliveries',
    method: 'GET',
    path: '/webhooks/{id}/deliveries',
    access: read,
    summary: 'List deliveries, newest first',
  },
  {
    id: 'getDelivery',
    method: 'GET',
    path: '/webhooks/{id}/deliveries/{deliveryId}',
    access: read,
    summary: 'Retrieve a delivery with its payload',
  },
  {
    id: 'retryDelivery',
    method: 'POST',
    path: '/webhooks/{id}/deliveries/{deliveryId}/retry',
    access: write,
    summary: 'Retry a delivery now',
  },
  {
    id: 'rotateWebhookSecret',
    method: 'POST',
    path: '/webhooks/{id}/rotate-secret',
    access: write,
    summary: 'Rotate the signing secret, the previous one signing on for a grace period',
  },
  {
    id: 'rotateWebhookSigningSecret',
    method: 'POST',
    path: '/webhooks/{id}/signing-secret/rotate',
    access: write,
    summary: "Rotate the signing secret (Resend's path for rotate-secret; the same grace period)",
  },
  // A webhook's deliveries as Resend's SDK reads them ("webhook events"): the delivery log under Resend's names.
  {
    id: 'listWebhookEvents',
    method: 'GET',
    path: '/webhooks/{id}/events',
    access: read,
    summary: "A webhook's deliveries as Resend's webhook events, newest first",
  },
  {
    id: 'getWebhookEvent',
    method: 'GET',
    path: '/webhooks/{id}/events/{eventId}',
    access: read,
    summary: 'One delivery as a Resend webhook event, with its payload',
  },
  {
    id: 'listWebhookEventAttempts',
    method: 'GET',
    path: '/webhooks/{id}/events/{eventId}/attempts',
    access: read,
    summary: "A delivery's attempts, newest first",
  },
  {
    id: 'replayWebhookEvent',
    method: 'POST',
    path: '/webhooks/{id}/events/{eventId}/replay',
    access: write,
    summary: 'Replay a delivery now (the manual retry)',
  },
  {
    id: 'checkWebhookSignature',
    method: 'POST',
    path: '/webhooks/{id}/signature-check',
    access: read,
    summary: 'Diagnose a signature check: the headers and raw body your endpoint received',
  },
  {
    id: 'startRecovery',
    method: 'POST',
    path: '/webhooks/{id}/recoveries',
    access: write,
    summary: 'Recover after an outage: one new attempt for every delivery of a window, in the background',
  },
  {
    id: 'listRecoveries',
    method: 'GET',
    path: '/webhooks/{id}/recoveries',
    access: read,
    summary: "A webhook's recovery jobs, newest first (the last 20)",
  },
  {
    id: 'getRecovery',
    method: 'GET',
    path: '/webhooks/{id}/recoveries/{recoveryId}',
    access: read,
    summary: "Follow a recovery job's progress",
  },
  {
    id: 'cancelRecovery',
    method: 'POST',
    path: '/webhooks/{id}/recoveries/{recoveryId}/cancel',
    access: write,
    summary: 'Cancel a recovery job before its next step',
  },
  {
    id: 'sendEmail',
    method: 'POST',
    path: '/emails',
    access: send,
    summary: 'Send an email',
    idempotent: true,
    largeBody: true,
  },
  {
    id: 'sendEmailBatch',
    method: 'POST',
    path: '/emails/batch',
    access: send,
    summary: 'Send up to 100 emails',
    idempotent: true,
    largeBody: true,
  },
  { id: 'createDomain', method: 'POST', path: '/domains', access: 'full', summary: 'Add a sending domain' },
  { id: 'listDomains', method: 'GET', path: '/domains', access: domainRead, summary: 'List sending domains' },
  { id: 'getDomain', method: 'GET', path: '/domains/{id}', access: domainRead, summary: 'Retrieve a domain' },
  {
    id: 'updateDomain',
    method: 'PATCH',
    path: '/domains/{id}',
    access: 'full',
    summary: 'Turn open or click tracking on or off',
  },
  { id: 'deleteDomain', method: 'DELETE', path: '/domains/{id}', access: 'full', summary: 'Delete a domain' },
  {
    id: 'verifyDomain',
    method: 'POST',
    path: '/domains/{id}/verify',
    access: domainRead,
    summary: 'Check the DNS records now',
  },
  { id: 'createContact', method: 'POST', path: '/contacts', access: 'full', summary: 'Add a contact (double opt-in)' },
  { id: 'listContacts', method: 'GET', path: '/contacts', access: 'full', summary: 'List contacts' },
  {
    id: 'getContact',
    method: 'GET',
    path: '/contacts/{id}',
    access: 'full',
    summary: 'Retrieve a contact by id or email address',
  },
  {
    id: 'updateContact',
    method: 'PATCH',
    path: '/contacts/{id}',
    access: 'full',
    summary: 'Update a contact (by id or email address)',
  },
  {
    id: 'deleteContact',
    method: 'DELETE',
    path: '/contacts/{id}',
    access: 'full',
    summary: 'Delete a contact (by id or email address)',
  },
  // Templates (docs/templates.md): a full-access key's, as contacts are (the spec's scopes name no template scope);
  // sending by template needs only email:send (the send routes).
  { id: 'createTemplate', method: 'POST', path: '/templates', access: 'full', summary: 'Create a template (a draft)' },
  { id: 'listTemplates', method: 'GET', path: '/templates', access: 'full', summary: 'List templates, newest first' },
  {
    id: 'getTemplate',
    method: 'GET',
    path: '/templates/{id}',
    access: 'full',
    summary: 'Retrieve a template (by id or alias) with its draft',
  },
  {
    id: 'updateTemplate',
    method: 'PATCH',
    path: '/templates/{id}',
    access: 'full',
    summary: "Update a template's draft (sends keep the published version until the next publish)",
  },
  { id: 'deleteTemplate', method: 'DELETE', path: '/templates/{id}', access: 'full', summary: 'Delete a template' },
  {
    id: 'publishTemplate',
    method: 'POST',
    path: '/templates/{id}/publish',
    access: 'full',
    summary: 'Publish the draft: sends by this template render it from now on',
  },
  {
    id: 'duplicateTemplate',
    method: 'POST',
    path: '/templates/{id}/duplicate',
    access: 'full',
    summary: "Copy a template's draft into a new draft template",
  },
  {
    id: 'confirmContactPage',
    method: 'GET',
    path: '/contacts/confirm/{token}',
    access: 'public',
    summary: 'Double opt-in: a confirmation page (never confirms)',
  },
  {
    id: 'confirmContact',
    method: 'POST',
    path: '/contacts/confirm/{token}',
    access: 'public',
    body: 'raw',
    summary: 'Double opt-in: confirm the subscription',
  },
  {
    id: 'unsubscribePage',
    method: 'GET',
    path: '/unsubscribe/{token}',
    access: 'public',
    summary: 'One-click unsubscribe: a confirmation page (never unsubscribes)',
  },
  {
    id: 'unsubscribe',
    method: 'POST',
    path: '/unsubscribe/{token}',
    access: 'public',
    body: 'raw',
    summary: 'One-click unsubscribe (RFC 8058)',
  },
  {
    id: 'cancelEmail',
    method: 'POST',
    path: '/emails/{id}/cancel',
    access: send,
    summary: 'Cancel a scheduled email before it is sent',
  },
  {
    id: 'updateEmail',
    method: 'PATCH',
    path: '/emails/{id}',
    access: send,
    summary: "Change a scheduled email's send time (scheduled_at) before it is sent",
  },
  {
    id: 'getEmail',
    method: 'GET',
    path: '/emails/{id}',
    access: { scope: 'email:read' },
    summary: 'Retrieve an email: status, recipients, event history',
  },
  {
    id: 'listEmailAttachments',
    method: 'GET',
    path: '/emails/{id}/attachments',
    access: { scope: 'email:read' },
    summary: "An email's attachments, each with an expiring download link",
  },
  {
    id: 'getEmailAttachment',
    method: 'GET',
    path: '/emails/{id}/attachments/{attachmentId}',
    access: { scope: 'email:read' },
    summary: 'One attachment of an email, with an expiring download link',
  },
  {
    id: 'listEmails',
    method: 'GET',
    path: '/emails',
    access: { scope: 'email:read' },
    summary: 'List emails, newest first, by status or recipient',
  },
  {
    id: 'getEmailMetrics',
    method: 'GET',
    path: '/emails/metrics',
    access: { scope: 'email:read' },
    summary:
      "Sending metrics (Resend's shape): sent, delivered, bounced, complained and their rates by day and domain, with the sending reputation as judged now",
  },
  {
    id: 'listReceivedEmails',
    method: 'GET',
    path: '/emails/receiving',
    access: { scope: 'email:read' },
    summary: 'List received (inbound) emails, newest first',
  },
  {
    id: 'getReceivedEmail',
    method: 'GET',
    path: '/emails/receiving/{id}',
    access: { scope: 'email:read' },
    summary: 'Retrieve a received email: body, headers, a download link of the raw message',
  },
  {
    id: 'listReceivedAttachments',
    method: 'GET',
    path: '/emails/receiving/{id}/attachments',
    access: { scope: 'email:read' },
    summary: "A received email's attachments with download links",
  },
  {
    id: 'getReceivedAttachment',
    method: 'GET',
    path: '/emails/receiving/{id}/attachments/{attachmentId}',
    access: { scope: 'email:read' },
    summary: 'One attachment of a received email with its download link',
  },
  {
    id: 'listEmailDeliveries',
    method: 'GET',
    path: '/emails/{id}/deliveries',
    access: read,
    summary: "The webhook deliveries of an email's events, newest first",
  },
  {
    id: 'listEventTypes',
    method: 'GET',
    path: '/event-types',
    access: 'key',
    summary: 'The event catalog: every event type with a JSON Schema of its webhook payload',
  },
  {
    id: 'getUsage',
    method: 'GET',
    path: '/usage',
    access: 'full',
    summary: "The account's plan, rate limit, and quotas used (live emails this month, test recipients today)",
  },
  {
    id: 'listApiRequests',
    method: 'GET',
    path: '/logs',
    access: 'full',
    summary: "The account's recent API requests in this mode: method, path, status, key, time (newest first, 24 h)",
  },
  {
    id: 'getApiRequest',
    method: 'GET',
    path: '/logs/{id}',
    access: 'full',
    summary: 'One API request of the log',
  },
  // The suppression list (per account and mode) as Resend's SDK calls it. Full access, like contacts: it names
  // recipients, and a change decides who gets mail.
  {
    id: 'listSuppressions',
    method: 'GET',
    path: '/suppressions',
    access: 'full',
    summary: 'List suppressed addresses, by address',
  },
  {
    id: 'addSuppression',
    method: 'POST',
    path: '/suppressions',
    access: 'full',
    summary: 'Suppress an address: no email is sent to it again until it is removed',
  },
  {
    id: 'getSuppression',
    method: 'GET',
    path: '/suppressions/{idOrEmail}',
    access: 'full',
    summary: 'Retrieve a suppression by id or address',
  },
  {
    id: 'removeSuppression',
    method: 'DELETE',
    path: '/suppressions/{idOrEmail}',
    access: 'full',
    summary: 'Remove a suppression (by id or address): the address gets email again',
  },
  {
    id: 'batchAddSuppressions',
    method: 'POST',
    path: '/suppressions/batch/add',
    access: 'full',
    summary: 'Suppress up to 100 addresses',
  },
  {
    id: 'batchRemoveSuppressions',
    method: 'POST',
    path: '/suppressions/batch/remove',
    access: 'full',
    summary: 'Remove up to 100 suppressions, by address or by id',
  },
  // The customer dashboard (docs/dashboard.md, "Dashboard"): server-rendered pages under /v1/dashboard; the
  // handler routes below the greedy {proxy+}. Public at the gateway: the session cookie is checked by the
  // dashboard itself.
  {
    id: 'dashboardHome',
    method: 'GET',
    path: '/dashboard',
    access: 'public',
    dashboard: true,
    summary: 'Dashboard: the overview page',
  },
  {
    id: 'dashboardPage',
    method: 'GET',
    path: '/dashboard/{proxy+}',
    access: 'public',
    dashboard: true,
    summary: 'Dashboard: a page or an asset',
  },
  {
    id: 'dashboardAction',
    method: 'POST',
    path: '/dashboard/{proxy+}',
    access: 'public',
    body: 'raw',
    dashboard: true,
    summary: 'Dashboard: a form post (CSRF-checked), answered with a redirect',
  },
] as const satisfies readonly RouteSpec[];

export type RouteId = (typeof routes)[number]['id'];
/** Routes without an API key (and without a caller). */
export type PublicRouteId = Extract<(typeof routes)[number], { access: 'public' }>['id'];
/** The dashboard's routes (a subset of the public ones). */
export type DashboardRouteId = Extract<(typeof routes)[number], { dashboard: true }>['id'];

/** SQS queues; each has a DLQ, and its consumer function reports partial batch failures. */
export interface QueueSpec {
  /** Consumer function time-out; the queue's visibility timeout is six times it (AWS guidance). */
  readonly functionTimeoutSeconds: number;
  readonly batchSize: number;
  /**
   * How long Lambda gathers records for a batch (MaximumBatchingWindowInSeconds, 1–300); a batch of more than 10
   * needs one. None: it invokes with what one receive got.
   */
  readonly maxBatchingWindowSeconds?: number;
  /** Receives before a message moves to the DLQ. */
  readonly maxReceiveCount: number;
  /**
   * Batches its consumer handles at once: the event source's MaximumConcurrency on AWS (2–1000), the local
   * queue's concurrency. Bounded, so the pipeline can never take the account concurrency the API needs.
   */
  readonly maxConcurrency: number;
}

export const queues = {
  /**
   * Our events → the dispatcher (fan-out to webhooks). Batches of up to 100 (gathered for up to a second): a
   * batch's jobs go out 10 a send, and its tenants' webhooks are listed once.
   */
  events: {
    functionTimeoutSeconds: 30,
    batchSize: 100,
    maxBatchingWindowSeconds: 1,
    maxReceiveCount: 5,
    maxConcurrency: 25,
  },
  /**
   * Delivery jobs (first attempts and retries) → the delivery worker: one attempt each, every attempt of a batch
   * at once. The shared lane. An invocation lasts as long as its slowest attempt: on a bad day (0.5% of requests
   * time out) a batch of 500 nearly always holds one that runs to the 10 s time-out, and shares that wait among 500
   * attempts, where a batch of 10 waits 2 s for 10. 10,000 deliveries a second at the bad day's latency then hold
   * about 250 of these (bench:scale), where batches of 10 would need 2,000 (twice the account's quota).
   */
  deliveries: {
    functionTimeoutSeconds: 30,
    batchSize: 500,
    maxBatchingWindowSeconds: 1,
    maxReceiveCount: 5,
    maxConcurrency: 300,
  },
  /**
   * The slow lane: jobs of endpoints that hang, fail to answer or answer slowly, and the retries of attempts that
   * were slow. Its concurrency is all such endpoints can hold together: 50 batches of 100 attempts hold 5,000
   * hanging requests at once, 500 a second at the 10 s time-out; SQS's fair queues share it between tenants.
   */
  slowDeliveries: {
    functionTimeoutSeconds: 30,
    batchSize: 100,
    maxBatchingWindowSeconds: 1,
    maxReceiveCount: 5,
    maxConcurrency: 50,
  },
  /**
   * Accepted emails whose time came ({emailId}) → the send worker: up to 10 an invocation, sent one after another,
   * paced at the invocation's share of the SES account's rate (sendflow:sesMaxSendRate over this maxConcurrency:
   * 1.4/s of 14/s), so one email's 50 copies take about 35 s, inside the 45 s before the worker's deadline (15 s
   * before the time-out) stops new claims and turns; copies left over go out on the next receive, and emails of
   * the batch the invocation has no time left to start are handed back to the queue at once (new messages). Test
   * mode is never paced: a batch of 10 takes well under a second. A throttled or failed copy goes back to pending
   * and the message is received again after the visibility time-out (6 min: the backoff), at most 5 times; then it
   * is email.failed. A busy queue's batches save a receive, a delete and an invocation an email.
   */
  sends: { functionTimeoutSeconds: 60, batchSize: 10, maxReceiveCount: 5, maxConcurrency: 10 },
} as const satisfies Record<string, QueueSpec>;

/**
 * The shared lane's bypass (AWS; issue 29): a second queue with the deliveries queue's settings, consumed by the
 * delivery worker as the shared lane. SQS hands out the oldest messages first, so a first attempt queued behind a
 * backlog (an outage's: a million jobs) waits until the lane has received all of it. A function that sends first
 * attempts (undelayed) sends them to the bypass instead while the deliveries queue holds `behindMessages` ready
 * or more (ApproximateNumberOfMessages: 5 s of the stage's rated 10,000 deliveries a second) and the bypass holds
 * fewer; each process asks SQS at most once every `checkEveryMs`. Everything else (retries, moves) stays where it was.
 */
export const DELIVERIES_BYPASS = { behindMessages: 50_000, checkEveryMs: 1_000 } as const;

export type QueueName = keyof typeof queues;

export function visibilityTimeoutSeconds(queue: QueueSpec): number {
  return queue.functionTimeoutSeconds * 6;
}

/**
 * How long a delivery attempt's claim holds. It outlives the delivery function's own time-out (Lambda stops a
 * stalled worker before its claim can lapse, so no second worker takes over an attempt the first could still
 * record), and lapses before the queue's visibility time-out gives the job back after a failure (so the job, when it
 * comes back, finds the claim gone and makes the attempt rather than skipping it as someone else's).
 */
export function deliveryClaimMs(attemptTimeoutMs: number): number {
  return Math.max(attemptTimeoutMs, queues.deliveries.functionTimeoutSeconds * 1000) + 10_000;
}

/** The reconciler runs this often on AWS (an EventBridge Scheduler rate schedule). */
export const RECONCILE_EVERY_MINUTES = 1;

/**
 * The sparse index of a table that keeps a transactional outbox (adapters/dynamodb/outbox): only items with
 * events not yet relayed are in it, oldest first, for the reconciler's sweep.
 */
const outboxIndex = {
  name: 'byOutboxEvents',
  partitionKey: 'outboxShard',
  sortKey: 'outboxDue',
  // The relay reads the keys and the events (adapters/dynamodb/outbox.ts `due`): a scheduled email's body or a
  // domain's records are not copied into the index. It replaced `byOutbox` (ALL) under a new name, since a
  // projection cannot change in place (lib/index-migration.ts).
  projection: { type: 'INCLUDE', attributes: ['outbox'] },
} as const;

/**
 * What an index entry holds besides the keys: KEYS_ONLY (the table's and the index's keys), INCLUDE (those and
 * the named attributes) or ALL (the whole item). An entry is billed by its size on every write, so an index
 * that only finds items projects what its reader needs and leaves the rest (payloads, bodies) to the table.
 * DynamoDB cannot change a projection in place: a new projection needs an index of another name
 * (docs/runbook.md ("Upgrading a stage across an index change")).
 */
export type Projection =
  | { readonly type: 'KEYS_ONLY' }
  | { readonly type: 'INCLUDE'; readonly attributes: readonly string[] }
  | { readonly type: 'ALL' };

export interface IndexSpec {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey?: string;
  /** ALL when omitted. */
  readonly projection?: Projection;
}

const KEYS_ONLY = { type: 'KEYS_ONLY' } as const;

export interface TableSpec {
  readonly partitionKey: string;
  readonly sortKey?: string;
  /** Number attribute of epoch seconds; DynamoDB TTL deletes lazily, so reads filter on it too. */
  readonly ttlAttribute?: string;
  readonly indexes?: readonly IndexSpec[];
  /** Stateful data the platform keeps when the stack is replaced. */
  readonly retain: boolean;
}

/** Every key attribute is a string. */
export const tables = {
  accounts: { partitionKey: 'id', retain: true },
  apiKeys: {
    partitionKey: 'hash',
    indexes: [{ name: 'byAccount', partitionKey: 'accountId', sortKey: 'createdAt' }],
    retain: true,
  },
  rateLimits: { partitionKey: 'key', ttlAttribute: 'expiresAt', retain: false },
  webhooks: { partitionKey: 'tenant', sortKey: 'id', retain: true },
  deliveries: {
    partitionKey: 'webhookId',
    sortKey: 'id',
    ttlAttribute: 'expiresAt',
    // Both sparse and small, so a first attempt that succeeds costs the table two writes and the indexes none
    // (adapters/dynamodb/deliveries.ts has the layout): byDueShard holds pending retries only (a first attempt
    // in flight is its queue's), spread over shards by webhook (the reconciler reads each; `?status=pending`
    // filters the webhook's own partition); byStatusKey holds failed rows only (`?status=failed`); succeeded rows,
    // the bulk of the log, are in no index.
    indexes: [
      {
        name: 'byStatusKey',
        partitionKey: 'statusKey',
        sortKey: 'id',
        projection: { type: 'INCLUDE', attributes: ['expiresAt'] },
      },
      {
        name: 'byDueShard',
        partitionKey: 'dueShard',
        sortKey: 'dueAt',
        projection: { type: 'INCLUDE', attributes: ['attempts'] },
      },
    ],
    retain: true,
  },
  emails: {
    partitionKey: 'id',
    // Every email expires after the stage's retention (SF_EMAIL_RETENTION_DAYS), with all of its parts and events.
    ttlAttribute: 'expiresAt',
    // Sparse: only emails with recipients still to settle, by due time (re-armed after a local restart), keys
    // only (never the body) and spread over shards; and emails with events not yet relayed (email.scheduled,
    // email.failed, email.suppressed).
    // byTenant lists a tenant's emails newest first (GET /v1/emails): keyed by `tenant` (account#mode, written on
    // every email at creation), so a listing in one mode never reads through the other mode's emails. Keys only,
    // so an email's later updates (recipient states, outbox) never write to it: one index write per email, at
    // creation. Batch decision items have no tenant and stay out of it.
    indexes: [
      { name: 'byScheduleShard', partitionKey: 'scheduleShard', sortKey: 'sendAt', projection: KEYS_ONLY },
      outboxIndex,
      { name: 'byTenant', partitionKey: 'tenant', sortKey: 'id', projection: KEYS_ONLY },
    ],
    retain: true,
  },
  /**
   * What of an email is large, immutable or changed per recipient, kept apart so the email item stays small and
   * is never rewritten with its body (adapters/dynamodb/emails.ts has the layout): per email, `body` (html, text,
   * headers: written once at accept; attachments will sit beside it), `links` (each recipient's unsubscribe URL,
   * written once) and one small `r#NNN` item per recipient with its send state, changed one conditional write
   * at a time with the email.failed / email.suppressed it causes in that item's outbox.
   */
  emailParts: {
    partitionKey: 'emailId',
    sortKey: 'part',
    ttlAttribute: 'expiresAt',
    indexes: [outboxIndex],
    retain: true,
  },
  /**
   * Each email's event history, one item per event (the email item stays the same size however many events
   * it gets). Keyed by event id so a redelivered event is recorded once; byTime reads the newest first.
   * Expires after the email retention, counted from when the event was recorded.
   */
  emailEvents: {
    partitionKey: 'emailId',
    sortKey: 'eventId',
    ttlAttribute: 'expiresAt',
    // byStatus: each email's status item (adapters/dynamodb/email-history.ts), keys only, sharded per tenant and
    // status: a status-filtered listing reads a bounded page of it instead of examining emails and histories.
    indexes: [
      { name: 'byTime', partitionKey: 'emailId', sortKey: 'at' },
      { name: 'byStatus', partitionKey: 'statusKey', sortKey: 'emailId', projection: KEYS_ONLY },
    ],
    retain: true,
  },
  /** Idempotency-Key records, 24 h. */
  idempotency: { partitionKey: 'key', ttlAttribute: 'expiresAt', retain: false },
  /** Sending domains by tenant; the sparse byPending index feeds the reconciler's verification checks. */
  domains: {
    partitionKey: 'tenant',
    sortKey: 'id',
    indexes: [{ name: 'byPending', partitionKey: 'pendingShard', sortKey: 'id' }, outboxIndex],
    retain: true,
  },
  contacts: { partitionKey: 'tenant', sortKey: 'id', indexes: [outboxIndex], retain: true },
  /** Per account and mode: addresses never to send to again (hard bounces, complaints, unsubscribes). */
  suppressions: { partitionKey: 'tenant', sortKey: 'address', indexes: [outboxIndex], retain: true },
  /** Dashboard sign-in links (15 min, used once) and sessions (12 h), by token hash: disposable. */
  sessions: { partitionKey: 'hash', ttlAttribute: 'expiresAt', retain: false },
  /**
   * Listen sessions under their account (pk `acct#<id>`) and the events put on each (pk the session id, sk the
   * event's cursor), all expiring (adapters/dynamodb/listen-sessions.ts): disposable.
   */
  listenSessions: { partitionKey: 'pk', sortKey: 'sk', ttlAttribute: 'expiresAt', retain: false },
  /**
   * Received (inbound) emails by tenant, newest first by id (time-ordered), one small item each (addresses,
   * subject, attachment metadata; the raw message, body and attachments are files); email.received waits in its
   * outbox. Kept for the email retention (SF_EMAIL_RETENTION_DAYS).
   */
  inboundEmails: {
    partitionKey: 'tenant',
    sortKey: 'id',
    ttlAttribute: 'expiresAt',
    indexes: [outboxIndex],
    retain: true,
  },
  /**
   * Templates per tenant: each template's small record and its aliases' claims under the tenant, its versions
   * (bodies, written once) under `tenant#templateId` (adapters/dynamodb/templates.ts). Only the API reads it.
   */
  templates: { partitionKey: 'tenant', sortKey: 'id', retain: true },
  /**
   * Sending reputation (adapters/dynamodb/reputation.ts): per tenant, daily counters of sent, delivered, bounced
   * and complained copies (the tenant's and each sending domain's, sharded, expiring after 92 days), and each
   * subject's standing (warned, paused until an operator lifts it), its account.reputation_warning events in the
   * item's outbox. Retained: a pause must outlive a replaced stack.
   */
  reputation: { partitionKey: 'pk', sortKey: 'sk', ttlAttribute: 'expiresAt', indexes: [outboxIndex], retain: true },
  /** The accounts' recent API requests (GET /v1/logs), per account and mode, newest last; kept 24 h: disposable. */
  apiRequests: { partitionKey: 'tenant', sortKey: 'id', ttlAttribute: 'expiresAt', retain: false },
} as const satisfies Record<string, TableSpec>;

export type TableName = keyof typeof tables;
export const tableNames = Object.keys(tables) as TableName[];

/** Environment variable that carries a table's physical name into a function. */
export function tableEnvVar(table: TableName): string {
  return `SF_TABLE_${table.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

/**
 * Tags on every SES identity Sendflow creates (AWS only): the deployment that owns it, whose IAM policies allow
 * identity actions and sending only where this tag matches, and the Sendflow account it was created for.
 */
export const SES_IDENTITY_TAGS = { managed: 'sendflow:managed', account: 'sendflow:account' } as const;
