// Wiring shared by both runtimes: every use case's dependencies from one DynamoDB client, the config, and
// the few adapters that differ per runtime (queues, retry scheduler). One place, so the two cannot drift.
import { randomBytes } from 'node:crypto';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { DestinationSender } from '../adapters/destination-sender';
import { HttpAttachmentFetcher } from '../adapters/http/attachment-fetcher';
import { DnsUrlVerifier } from '../adapters/http/url-verifier';
import { HttpWebhookSender } from '../adapters/http/webhook-sender';
import { KeyedSlots } from '../adapters/in-process/keyed-slots';
import { InProcessKnownStreaks } from '../adapters/in-process/known-streaks';
import { notifyingSessions } from '../adapters/in-process/listen-signals';
import { InProcessOpenPolls } from '../adapters/in-process/open-polls';
import { InMemoryPaceCounter } from '../adapters/in-process/pace-counter';
import { InMemoryRateLimitCounter } from '../adapters/in-process/rate-limit-counter';
import { TokenBucketPacer } from '../adapters/in-process/send-pacer';
import { CachedWebhookReads } from '../adapters/in-process/webhook-cache';
import { QuickJsTransformRunner } from '../adapters/sandbox/quickjs-sandbox';
import { SimulatedDomainProvider } from '../adapters/simulator/simulated-domains';
import { SimulatedEmailProvider } from '../adapters/simulator/simulated-provider';
import { PowertoolsTelemetry } from '../adapters/telemetry/powertools-telemetry';
import type { DomainProvider } from '../app/domains/ports';
import { LIST_QUERIES_AT_ONCE } from '../app/emails/list-emails';
import type { EmailBodyStore, EmailProvider, LinkSigner, SendScheduler } from '../app/emails/ports';
import { type ProcessEventDeps, processEvents } from '../app/events/process-event';
import type { FileStore } from '../app/files/ports';
import type { MimeParser } from '../app/inbound/ports';
import type { InboundDeps } from '../app/inbound/receive-email';
import type { ListenSignals } from '../app/listen/ports';
import { type Notifier, reputationNotice, sendNotice, webhookDisabledNotice } from '../app/notices/notify';
import type { AccountSlots, AuthorizerCache, Clock, WorkShares } from '../app/ports';
import { SentTally } from '../app/reputation/sent-tally';
import { SingleFlight } from '../app/reputation/single-flight';
import type { ReputationDeps } from '../app/reputation/track-reputation';
import type { Telemetry } from '../app/telemetry';
import type { Tracing } from '../app/tracing';
import type { AttemptDeps } from '../app/webhooks/attempts';
import { countAttemptSafely } from '../app/webhooks/delivery-figures';
import { EndpointGate } from '../app/webhooks/endpoint-gate';
import { type SeenAttempt, watchEndpointSafely } from '../app/webhooks/endpoint-watch';
import { FigureTally } from '../app/webhooks/figure-tally';
import { EndpointPace, IN_PROCESS_PACE, type PaceCounter, type PaceOptions } from '../app/webhooks/pace';
import type {
  DeliveryJob,
  DeliveryQueue,
  EventPublisher,
  RecoveryQueue,
  RetryScheduler,
  WebhookSender,
} from '../app/webhooks/ports';
import { ATTACHMENT_LIMITS } from '../domain/email/attachments';
import { EMAIL_LIMITS } from '../domain/email/limits';
import type { SendflowEvent } from '../domain/events';
import { NOTICE_LOG_LINES, REPUTATION_LOG_LINES } from '../domain/metric-names';
import { withheldEventTypes } from '../domain/stored-formats';
import { autoDisablePolicy, redactedUrl } from '../domain/webhooks/auto-disable';
import { NO_TIMINGS } from '../domain/webhooks/delivery';
import type { AttemptFigure } from '../domain/webhooks/delivery-figures';
import { AWS_LANE_POLICY, type LanePolicy } from '../domain/webhooks/endpoint-health';
import { recoveryPageSize } from '../domain/webhooks/recovery';
import type { Lanes } from '../handlers/queue/delivery-worker';
import { deliveryClaimMs, queues, visibilityTimeoutSeconds } from '../manifest';
import type { Config } from './config';
import { createRepositories } from './repositories';
import { createTracing } from './tracing';

/** What differs between AWS and the local runtime. */
export interface RuntimeAdapters {
  readonly deliveryQueue: DeliveryQueue;
  /** Where recovery jobs' steps go (the deliveries queue). */
  readonly recoveryQueue: RecoveryQueue;
  readonly retries: RetryScheduler;
  readonly events: EventPublisher;
  readonly sendScheduler: SendScheduler;
  /** Live-mode email and domain identities on AWS (SES); the simulators otherwise. */
  readonly liveProvider?: EmailProvider;
  readonly liveDomainProvider?: DomainProvider;
  /** The host a receiving domain's MX record names (app/domains: DomainDeps.receivingMx); absent, none is shown. */
  readonly receivingMx?: string;
  /** Flushed when a key is revoked or a plan changes (API Gateway's cache; the local gateway's). */
  readonly authorizerCache: AuthorizerCache;
  /** Signs public links; its base URL may only be known once the runtime listens. */
  readonly links: LinkSigner;
  readonly clock?: Clock;
  /** Tests and benchmarks may swap the HTTP sender. */
  readonly sender?: WebhookSender;
  /**
   * The AWS destinations' sender (adapters/aws/destination-sender.ts: STS, EventBridge and SQS clients), given only
   * by the runtimes whose functions make attempts (the delivery worker, the API, the local runtime), so no other
   * bundle carries those clients. Absent: an attempt to an AWS destination fails visibly, naming the function.
   */
  readonly awsDestinations?: WebhookSender;
  /** See Claim.epoch: the local runtime's start time; absent (0) on AWS. */
  readonly claimEpoch?: number;
  /** Tests may record telemetry; otherwise log lines on `logger` and Powertools Metrics per the config. */
  readonly telemetry?: Telemetry;
  /** Spans (runtime/tracing.ts): from config.tracing (OTEL_*) unless given; off without an endpoint. */
  readonly tracing?: Tracing;
  /** Where email bodies are written once and read: S3 on AWS, the data directory locally (emailParts if absent). */
  readonly emailBodies?: EmailBodyStore;
  /**
   * Files kept by key with an expiry and download links (attachments, received messages): S3 on AWS, the data
   * directory locally. Absent: a store that refuses every call (a function that keeps no files).
   */
  readonly files?: FileStore;
  /** Received messages' parser (the inbound function and the local runtime): a time-boxed worker thread. */
  readonly mimeParser?: MimeParser;
  /**
   * The slow deliveries lane and its queue ARN (where the delivery worker runs), and the longest delay its queue
   * holds (SQS: 900 s; none locally): a slow attempt's retry waits there if it fits, else as other retries do.
   */
  readonly slowLane?: {
    readonly queue: DeliveryQueue;
    readonly steps: RecoveryQueue;
    readonly arn: string;
    readonly maxDelaySeconds?: number;
  };
  /** The lanes' rules: AWS_LANE_POLICY unless given (the local runtime gives its own: one process, many batches). */
  readonly lanePolicy?: LanePolicy;
  /** The deliveries DLQs the delivery worker consumes (their jobs' deliveries are recorded failed). */
  readonly deliveryDlqArns?: readonly string[];
  /**
   * Paced webhooks' shared pace: DynamoDB on AWS (many instances); absent, this process's memory (the local
   * runtime: one process makes every attempt).
   */
  readonly pace?: { readonly counter: PaceCounter; readonly options: PaceOptions };
  /**
   * Wakes waiting listen polls when the fan-out puts events on their sessions: the local runtime, where both run
   * in one process. Absent (AWS: the fan-out is another function), a waiting poll reads once a second.
   */
  readonly listenSignals?: ListenSignals;
  /** Each account's share of the runtime (the local gateway's slots), for work done outside a request's slot. */
  readonly accountSlots?: AccountSlots;
  /**
   * Each account's share of the time for its email listings (the local runtime: one process and one store thread
   * for every tenant); absent on AWS (each request its own function instance).
   */
  readonly listShare?: WorkShares;
  /**
   * Sends the accounts' notices (app/notices): SES from SF_NOTICE_FROM on AWS, notices.jsonl locally. Absent (a
   * stage without a sender): a notice is skipped with a log line.
   */
  readonly notifier?: Notifier;
}

export function createServices(config: Config, client: DynamoDBClient, logger: Logger, adapters: RuntimeAdapters) {
  const clock = adapters.clock ?? { now: () => Date.now() };
  const { webhooks: hooks } = config;
  const tracing = adapters.tracing ?? createTracing(config.tracing, 'sendflow');
  const random = randomBytes;
  // Test mode is simulated everywhere; live mode uses the live provider where one is wired (SES on AWS).
  const simulator = new SimulatedEmailProvider({
    events: adapters.events,
    stepSeconds: config.simulatorStepSeconds,
  });
  const simulatedDomains = new SimulatedDomainProvider({
    verifyAfterSeconds: config.domainVerifySeconds,
    now: () => clock.now(),
  });
  const repositories = createRepositories(client, config.tables, {
    emailRetentionSeconds: config.emailRetentionSeconds,
    storedFormats: config.storedFormats,
    ...(adapters.emailBodies ? { emailBodies: adapters.emailBodies } : {}),
  });
  // One per process: the streaks its attempts counted (adapters/in-process/known-streaks).
  const knownStreaks = new InProcessKnownStreaks();
  // One per process: the delivery figures its worker holds for a second (app/webhooks/figure-tally).
  const figureTally = new FigureTally(repositories.deliveryFigures, clock, {
    failed: (error, lost) =>
      logger.warn('delivery figures not counted (the charts undercount them)', {
        error: error as Error,
        webhook_id: lost.webhookId,
        attempts: lost.attempts,
      }),
  });
  const files = adapters.files ?? unavailableFiles();
  const providerFor = (mode: 'live' | 'test'): EmailProvider => (mode === 'live' && adapters.liveProvider) || simulator;
  // Every event put on a session wakes its waiting polls, where they run in this process (app/listen).
  const listenSessions = adapters.listenSignals
    ? notifyingSessions(repositories.listenSessions, adapters.listenSignals)
    : repositories.listenSessions;
  const listenRelayFailed = (event: SendflowEvent, error: unknown) =>
    logger.warn('listen relay failed', { error: error as Error, event_id: event.id });
  // The account's notice (an e-mail to its address for notices, if it keeps one), best effort: never fails the
  // warning, the pause or the disable it tells of.
  const notify = async (accountId: string, notice: ReturnType<typeof reputationNotice>) => {
    // Not sent: one WARN line (account and kind only, never the address or the text), which a metric filter
    // counts on AWS (NoticesNotSent, lib/constructs/monitoring.ts): nothing is dropped unseen.
    if (!adapters.notifier) {
      logger.warn(NOTICE_LOG_LINES.noSender, { account_id: accountId, kind: notice.kind });
      return;
    }
    const deps = { accounts: repositories.accounts, counter: repositories.counter, notifier: adapters.notifier, clock };
    try {
      const outcome = await sendNotice(deps, accountId, notice.kind, notice);
      logger.info('account notice', { account_id: accountId, kind: notice.kind, outcome });
    } catch (error) {
      logger.warn(NOTICE_LOG_LINES.failed, { error: error as Error, account_id: accountId, kind: notice.kind });
    }
  };
  // Sending reputation (issue 29): bounces and complaints counted and judged where events are processed, copies
  // counted where they are sent (sentTally), checked where emails are accepted and sent.
  const reputation: ReputationDeps = {
    store: repositories.reputationStore,
    policy: config.reputation,
    clock,
    random,
    announce: config.reputation.events,
    judgments: new SingleFlight(),
    // One line per warning or pause, for operators: a metric filter counts the paused lines, and its alarm
    // e-mails the stage's non-paging subscribers (lib/constructs/monitoring.ts).
    noted: (tenant, subject, level, figures) => {
      logger.warn(REPUTATION_LOG_LINES[level], {
        account_id: tenant.accountId,
        mode: tenant.mode,
        subject: subject.kind === 'account' ? 'account' : `domain ${subject.domain}`,
        sent: figures.sent,
        bounce_rate: figures.bounceRate,
        complaint_rate: figures.complaintRate,
      });
      return notify(tenant.accountId, reputationNotice(tenant, subject, level, figures));
    },
  };
  const reputationFailed = (event: SendflowEvent, error: unknown) =>
    logger.warn('reputation not counted or judged (the figures may undercount by this event)', {
      error: error as Error,
      event_id: event.id,
      event_type: event.type,
    });
  const filteredCountFailed = (error: unknown) =>
    logger.warn('filtered events not counted (filtered_24h undercounts them)', { error: error as Error });
  // The send worker's own events (email.sent) are processed where they arise, as the dispatcher would; those it
  // cannot finish go to the events queue through the email's outbox (app/emails/send-emails).
  const eventDeps: ProcessEventDeps = {
    tracing,
    webhooks: repositories.webhooks,
    deliveryQueue: adapters.deliveryQueue,
    clock,
    emailHistory: repositories.emailHistory,
    suppressions: repositories.suppressions,
    listenSessions,
    listenRelayFailed,
    orderLanes: repositories.orderLanes,
    retentionSeconds: hooks.retentionSeconds,
    suppressionEvents: config.storedFormats.suppressionEvents,
    // A bounce's suppression.added is relayed at once where this runtime has the events queue (locally, the SES
    // mapper); elsewhere (the AWS dispatcher) the publish is refused and the reconciler's sweep relays it.
    events: adapters.events,
    reputation,
    reputationFailed,
    filteredCounts: repositories.filteredCounts,
    filteredCountFailed,
  };
  return {
    logger,
    telemetry: adapters.telemetry ?? new PowertoolsTelemetry({ logger, metricsService: config.metricsService }),
    tracing,
    clock,
    random,
    ...repositories,
    listenSessions,
    // The delivery worker's webhook reads, kept for SF_WEBHOOK_CACHE_SECONDS (adapters/in-process/webhook-cache).
    webhookReads: hooks.cacheSeconds
      ? new CachedWebhookReads(repositories.webhooks, clock, hooks.cacheSeconds * 1000)
      : repositories.webhooks,
    domainProviderFor: (mode: 'live' | 'test'): DomainProvider =>
      (mode === 'live' && adapters.liveDomainProvider) || simulatedDomains,
    providerFor,
    ...(adapters.receivingMx ? { receivingMx: adapters.receivingMx } : {}),
    // One bucket per process: the send worker invocation's share on AWS, the whole rate locally.
    ...(config.sesMaxSendRate
      ? {
          livePacer: new TokenBucketPacer({ perSecond: config.sesMaxSendRate, clock }),
          // Every copy's turn at the share, plus a tenth and a second for the claims, records and processing.
          pacedEmailMs: Math.ceil((EMAIL_LIMITS.recipients / config.sesMaxSendRate) * 1100 + 1000),
        }
      : {}),
    urlVerifier: new DnsUrlVerifier({ allowPrivate: hooks.allowPrivateUrls }),
    // AWS destinations: external ids live on the account item; the principal their trust policies name.
    externalIds: repositories.accounts,
    ...(hooks.aws.trustPrincipal ? { awsTrustPrincipal: hooks.aws.trustPrincipal } : {}),
    // Webhook transformations' sandbox: its WebAssembly module is loaded on the first transformation run or check.
    transforms: new QuickJsTransformRunner(),
    // One seam for every destination: HTTP to the URL, or the customer's EventBridge bus or SQS queue.
    sender:
      adapters.sender ??
      new DestinationSender(
        new HttpWebhookSender({
          timeoutMs: hooks.attemptTimeoutMs,
          allowPrivate: hooks.allowPrivateUrls,
          now: () => clock.now(),
        }),
        adapters.awsDestinations ?? noAwsDestinations(clock),
      ),
    deliveryQueue: adapters.deliveryQueue,
    recoveryQueue: adapters.recoveryQueue,
    // A step fits in the delivery function's time, 5 s to spare, whatever the attempt time-out.
    recoveryPageSize: recoveryPageSize(hooks.attemptTimeoutMs, queues.deliveries.functionTimeoutSeconds * 1000 - 5_000),
    retries: adapters.retries,
    events: adapters.events,
    sendScheduler: adapters.sendScheduler,
    links: adapters.links,
    files,
    // Attachments given by `path`: the webhooks' SSRF guard, with their own private-URL setting (off locally too).
    attachmentFetcher: new HttpAttachmentFetcher({ allowPrivate: config.attachments.allowPrivateUrls }),
    // An account's requests with attachments, a bounded number at a time in this process; its email listings too.
    attachmentSlots: new KeyedSlots(ATTACHMENT_LIMITS.requestsAtOnce),
    listSlots: new KeyedSlots(LIST_QUERIES_AT_ONCE),
    ...(adapters.listShare ? { listShare: adapters.listShare } : {}),
    emailRetentionSeconds: config.emailRetentionSeconds,
    // receiveEmail's (app/inbound): the local SMTP server's spool and the AWS inbound function hand it messages.
    inbound: {
      domains: repositories.domains,
      received: repositories.receivedEmails,
      files,
      events: adapters.events,
      clock,
      random,
      retentionSeconds: config.emailRetentionSeconds,
      parser: adapters.mimeParser ?? unavailableParser(),
      // Received bytes count on the receiving account's day (its plan read by key, one conditional counter write).
      inboundQuota: { quotas: repositories.quotas, accounts: repositories.accounts },
    } satisfies InboundDeps,
    authorizerCache: adapters.authorizerCache,
    policy: { delaysSeconds: hooks.retryDelaysSeconds },
    // Auto-disable (app/webhooks/endpoint-watch): told of every recorded attempt that made a request.
    // Best effort (watchEndpointSafely): a failed bookkeeping write is logged, never fails the attempt.
    watch: (seen: SeenAttempt) =>
      watchEndpointSafely(
        {
          health: repositories.webhookHealth,
          webhooks: repositories.webhooks,
          deliveryQueue: adapters.deliveryQueue,
          clock,
          random,
          autoDisable: autoDisablePolicy(hooks.disableAfterSeconds, hooks.failingAfterSeconds),
          known: knownStreaks,
          disabled: (webhook, reason) =>
            notify(webhook.accountId, webhookDisabledNotice(webhook, redactedUrl(webhook.url), reason)),
        },
        seen,
        (error) => logger.warn('endpoint health not noted', { error: error as Error, webhook_id: seen.webhook.id }),
      ),
    // The charts' hourly figures (app/webhooks/delivery-figures): the worker's automatic attempts held a second
    // and written one ADD per webhook and hour (figureTally, settled at each worker invocation's end); manual
    // retries, test sends and recovery steps written at once. Best effort: a lost count never fails an attempt.
    figureTally,
    countFigures: async (attempt: Parameters<NonNullable<AttemptDeps['countFigures']>>[0], figure: AttemptFigure) => {
      if (attempt.kind === 'automatic') {
        figureTally.add({ ...attempt, spread: `${attempt.deliveryId}#${attempt.attempt}` }, figure);
        return;
      }
      await countAttemptSafely({ figures: repositories.deliveryFigures }, attempt, figure, (error) =>
        logger.warn('delivery figures not counted', { error: error as Error, webhook_id: attempt.webhookId }),
      );
    },
    claimMs: deliveryClaimMs(hooks.attemptTimeoutMs),
    claimEpoch: adapters.claimEpoch ?? 0,
    ...(adapters.slowLane
      ? {
          lanes: deliveryLanes(
            adapters.slowLane,
            adapters.deliveryQueue,
            adapters.retries,
            adapters.lanePolicy ?? AWS_LANE_POLICY,
            clock,
          ),
        }
      : {}),
    pacing: {
      pace: new EndpointPace(
        adapters.pace?.counter ?? new InMemoryPaceCounter(),
        clock,
        adapters.pace?.options ?? IN_PROCESS_PACE,
      ),
      queue: adapters.deliveryQueue,
    },
    ...(adapters.deliveryDlqArns ? { isDeadLetter: deadLetterSources(adapters.deliveryDlqArns) } : {}),
    // A send claim outlives the send function's time-out: it lapses only when its worker is gone.
    sendClaimMs: (queues.sends.functionTimeoutSeconds + 60) * 1000,
    maxSendTries: queues.sends.maxReceiveCount as number,
    sendRetryMs: visibilityTimeoutSeconds(queues.sends) * 1000,
    retentionSeconds: hooks.retentionSeconds,
    // Expand/contract (domain/stored-formats.ts): suppression.* events are recorded, and subscribable, once on.
    suppressionEvents: config.storedFormats.suppressionEvents,
    // Expand/contract: event types a release before cannot read wait for their stage's switch (a stored format's,
    // domain/stored-formats.ts; the reputation event's, SF_REPUTATION_EVENTS).
    withheldEventTypes: [
      ...withheldEventTypes(config.storedFormats),
      ...(config.reputation.events ? [] : ['account.reputation_warning']),
    ],
    graceSeconds: hooks.reconcileGraceSeconds,
    maxBodyBytes: config.maxBodyBytes,
    maxSendBodyBytes: config.maxSendBodyBytes,
    listenMaxWaitMs: config.listenMaxWaitMs,
    ...(adapters.listenSignals ? { listenSignals: adapters.listenSignals } : {}),
    // Open polls per account: exact locally (one process); on AWS per container, where a poll answers at once.
    openPolls: new InProcessOpenPolls(),
    ...(adapters.accountSlots ? { accountSlots: adapters.accountSlots } : {}),
    listenRelayFailed,
    // The send worker's part of per-email ordering: a copy's email.sent enters its lanes before the hand-over.
    sentOrdering: {
      webhooks: repositories.webhooks,
      orderLanes: repositories.orderLanes,
      deliveries: repositories.deliveries,
      // A wake-up is a first attempt due now: the deliveries queue itself (the send worker schedules nothing).
      retries: {
        schedule: (job: DeliveryJob, delaySeconds: number) => adapters.deliveryQueue.send([job], delaySeconds),
      },
      clock,
      retentionSeconds: hooks.retentionSeconds,
    },
    processEvents: async (events: readonly SendflowEvent[]) => {
      const failed = await processEvents(eventDeps, events);
      if (failed.length) {
        logger.warn(
          "events not processed where they arose: retried (the send worker's through the events queue, the mapper's by SQS)",
          {
            event_ids: failed.map((event) => event.id),
          },
        );
      }
      return failed;
    },
    ipRateLimit: config.ipRateLimit,
    reputation,
    reputationFailed,
    filteredCountFailed,
    // The send worker's copies, counted toward reputation one write per batch, tenant, day and sending domain.
    sentTally: () =>
      new SentTally(repositories.reputationStore, clock, {
        failed: (error, lost) =>
          logger.warn('copies sent not counted (the reputation figures undercount them)', {
            error: error as Error,
            account_id: lost.tenant.accountId,
            mode: lost.tenant.mode,
            copies: lost.copies,
          }),
      }),
    // Requests without a valid key are counted per IP in memory, never with a DynamoDB write: exact locally
    // (one process); on AWS the WAF's rate-based rules are the limit.
    anonymousCounter: new InMemoryRateLimitCounter(),
  };
}

export type Services = ReturnType<typeof createServices>;

/** Where AWS destinations are not wired: every attempt to one fails, saying so (a wiring bug, never silent). */
function noAwsDestinations(clock: Clock): WebhookSender {
  return {
    send: async () => ({
      at: clock.now(),
      statusCode: null,
      durationMs: 0,
      error: 'AWS destinations are not wired into this function (see runtime/)',
      errorClass: 'network_error',
      timings: NO_TIMINGS,
      response: '',
    }),
  };
}

/** The file store of a runtime that wires none: any use is a wiring bug, reported as such. */
function unavailableFiles(): FileStore {
  const refuse = () => Promise.reject(new Error('No file store is wired into this function (see runtime/).'));
  return { put: refuse, get: refuse, exists: refuse, downloadUrl: refuse };
}

/** No silent fallback to a parse on the event loop: a runtime that receives mail wires the thread parser. */
function unavailableParser(): MimeParser {
  return { parse: () => Promise.reject(new Error('No MIME parser is wired into this function (see runtime/).')) };
}

/** Whether a record comes from one of the deliveries DLQs (its event source mapping's queue). */
function deadLetterSources(arns: readonly string[]): (record: SQSRecord) => boolean {
  const sources = new Set(arns);
  return (record) => sources.has(record.eventSourceARN);
}

/**
 * The delivery worker's lanes (its own gate, per process or container), with the slow lane's retries: a delay the
 * slow lane's queue holds waits there, a longer one goes as any retry. Exported for bench:scale, which runs it.
 */
export function deliveryLanes(
  slow: NonNullable<RuntimeAdapters['slowLane']>,
  shared: DeliveryQueue,
  retries: RetryScheduler,
  policy: LanePolicy,
  clock: Clock,
): Lanes {
  const longest = slow.maxDelaySeconds ?? Number.POSITIVE_INFINITY;
  return {
    gate: new EndpointGate(policy, clock),
    slowLane: slow.queue,
    slowSteps: slow.steps,
    sharedLane: shared,
    busyDelaySeconds: policy.busyDelaySeconds,
    isSlowLane: (record) => record.eventSourceARN === slow.arn,
    slowRetries: {
      schedule: (job, delaySeconds) =>
        delaySeconds <= longest ? slow.queue.send([job], delaySeconds) : retries.schedule(job, delaySeconds),
    },
  };
}
