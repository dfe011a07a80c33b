// The local runtime: the same handlers as on AWS, behind a node:http gateway, on an embedded DynamoDB, with
// in-process queues standing in for SQS and Scheduler, journaled in the data directory so nothing accepted is
// lost to a crash or a stop. start() → a running API; stop() → everything closed within STOP_MS.

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AwsDestinationSender } from '../../adapters/aws/destination-sender';
import { upgradeEmails } from '../../adapters/dynamodb/emails';
import { upgradeSuppressions } from '../../adapters/dynamodb/suppressions';
import { QueueJournal } from '../../adapters/in-process/journal';
import { KeyedSlots } from '../../adapters/in-process/keyed-slots';
import { InProcessListenSignals } from '../../adapters/in-process/listen-signals';
import { InProcessQueue } from '../../adapters/in-process/queue';
import { KeyedWorkShares } from '../../adapters/in-process/work-shares';
import { localEmailBodies } from '../../adapters/local/file-email-bodies';
import { FileNotifier } from '../../adapters/local/file-notifier';
import { localFileStore } from '../../adapters/local/file-store';
import { localSpool, type SpoolEntry } from '../../adapters/local/inbound-spool';
import { type SmtpInbound, type SmtpLimits, startSmtpInbound } from '../../adapters/local/smtp-inbound';
import { noUsagePlans } from '../../adapters/local/usage-plans';
import { parseThreadModule } from '../../adapters/mime/parse-thread-module';
import { ThreadMimeParser } from '../../adapters/mime/thread-mime-parser';
import { PowertoolsTelemetry } from '../../adapters/telemetry/powertools-telemetry';
import { createAccount, createAccountKey, DEFAULT_KEY_NAME, findDefaultAccount } from '../../app/accounts';
import { receivingDomain } from '../../app/domains/domains';
import type { EmailBodyStore } from '../../app/emails/ports';
import { type InboundMessage, receiveEmail } from '../../app/inbound/receive-email';
import { recordFailedArrival } from '../../app/inbound/record-failed-arrival';
import type { Clock } from '../../app/ports';
import type { Telemetry } from '../../app/telemetry';
import type { WebhookSender } from '../../app/webhooks/ports';
import { errorBody } from '../../domain/error-names';
import { LANE_POLICY, type LanePolicy } from '../../domain/webhooks/endpoint-health';
import { shareRule } from '../../domain/work-share';
import { createAuthorizerHandler } from '../../handlers/authorizer';
import { createApiHandler } from '../../handlers/http/api';
import type { ApiContext } from '../../handlers/http/context';
import { createDeliveryWorkerHandler } from '../../handlers/queue/delivery-worker';
import { createDispatcherHandler } from '../../handlers/queue/dispatcher';
import {
  deliveryMessageAccount,
  encodeEvent,
  encodeJob,
  encodeStep,
  eventMessageAccount,
} from '../../handlers/queue/messages';
import { createReconcilerHandler } from '../../handlers/queue/reconciler';
import { createSendWorkerHandler, decodeSend, encodeSend } from '../../handlers/queue/send-worker';
import { type QueueName, queues, STAGE, visibilityTimeoutSeconds } from '../../manifest';
import type { Config } from '../config';
import { documentClient } from '../document-client';
import { createLogger } from '../logger';
import { createServices, type Services } from '../services';
import type { ConsoleStyle } from './console-lines';
import { createConsoleLogger } from './console-logger';
import { startDynalite } from './dynalite';
import { createTables, embeddedDynamoClient } from './dynamo';
import { createDownloadRoute } from './file-downloads';
import { AuthorizerResultCache, createGateway, createGatewayServer } from './gateway';
import { PollRefusals } from './poll-refusals';
import { makeDataDirPrivate, PRIVATE_FILE_MODE } from './private-files';
import { accountStoreLanes } from './request-lane';

/** API Gateway's integration time-out for REST APIs. */
const INTEGRATION_TIMEOUT_MS = 29_000;
/**
 * How long a clean stop waits for requests and batches in flight. What is unfinished then stays in the journal
 * (and its claims die with this epoch), so the next start picks it up; nothing needs draining.
 */
const STOP_MS = 6_000;

export interface LocalRuntime {
  /** Base URL including the stage, e.g. http://127.0.0.1:3000/v1 */
  readonly url: string;
  readonly port: number;
  /** The inbound SMTP server's port (SF_SMTP_PORT, or the free one picked). */
  readonly smtpPort: number;
  /**
   * The inbound SMTP server's spool: `idle()` once every accepted message is stored (or waits for a retry),
   * `deadLetters()` the messages that failed every try.
   */
  readonly inbound: Pick<SmtpInbound, 'idle' | 'pending' | 'deadLetters'>;
  readonly dynamoEndpoint: string;
  /** Authorizes the admin CLI's cache flush (gateway ADMIN_FLUSH_PATH); random per start. */
  readonly adminToken: string;
  /** Present when this start created the default account on an empty store. */
  readonly seeded?: { accountId: string; apiKey: string };
  /** The account `npm start` created on the first start of this data directory (its dashboard link is printed). */
  readonly defaultAccountId?: string;
  /** The wiring and queues, for tests and benchmarks. */
  readonly services: Services;
  /** The gateway's authorizer result cache (its size, for tests of its bound). */
  readonly authorizerCache: AuthorizerResultCache;
  /** Each account's requests in flight at the gateway (at most LOCAL_ACCOUNT_CONCURRENCY). */
  readonly accountSlots: KeyedSlots;
  /** The manifest's queues, and the delivery lanes' DLQ. */
  readonly queues: Readonly<Record<QueueName | 'deliveriesDlq', InProcessQueue>>;
  stop(): Promise<void>;
}

export interface LocalRuntimeOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /**
   * Log lines for people (`npm start` on a terminal, or SF_LOG_FORMAT=pretty): one short line per request and per
   * webhook attempt, successful ones included (at INFO here, DEBUG on AWS). Absent: the AWS functions' JSON lines.
   */
  readonly consoleLines?: ConsoleStyle;
  /** Called on the local DynamoDB client as soon as it exists, e.g. to add a call-counting middleware. */
  readonly instrument?: (client: DynamoDBClient) => void;
  /**
   * Where email bodies go instead of the data directory, given the runtime's DynamoDB client: a benchmark stores
   * them as the AWS functions do (emailParts), so its meter bills them.
   */
  readonly emailBodies?: (client: DynamoDBClient) => EmailBodyStore;
  /** A module for the embedded DynamoDB's thread to import before dynalite starts (a benchmark's meter). */
  readonly dynamoPreload?: string;
  /** Called if the embedded DynamoDB dies while the runtime runs (it is logged in any case). */
  readonly onDynamoFailure?: (error: Error) => void;
  readonly sender?: WebhookSender;
  /** The delivery lanes' rules (LANE_POLICY: one process for every batch); bench:cost measures AWS_LANE_POLICY. */
  readonly lanePolicy?: LanePolicy;
  /** Batches as large as the AWS event sources' (the manifest's batchSize) rather than LOCAL_BATCH_SIZE: bench:cost. */
  readonly awsBatches?: boolean;
  /** Called once if the data directory is locked and the start waits for it (SF_DATA_DIR_WAIT_SECONDS). */
  readonly onDataDirWait?: () => void;
  /** The inbound SMTP server's limits (tests shorten its time-outs); DEFAULT_SMTP_LIMITS otherwise. */
  readonly smtpLimits?: Partial<SmtpLimits>;
}

export async function startLocalRuntime(config: Config, options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const logger =
    options.logger ?? (options.consoleLines ? createConsoleLogger(config, options.consoleLines) : createLogger(config));
  const dynamo = await startDynalite(config.dataDir, {
    ...(options.dynamoPreload ? { preload: options.dynamoPreload } : {}),
    lockWaitMs: config.dataDirWaitSeconds * 1000,
    ...(options.onDataDirWait ? { onLockWait: options.onDataDirWait } : {}),
    onFailure: (error) => {
      logger.error('The embedded DynamoDB stopped: every request fails from now on', error);
      options.onDynamoFailure?.(error);
    },
  });
  const authorizerCache = new AuthorizerResultCache();
  const accountSlots = new KeyedSlots(LOCAL_ACCOUNT_CONCURRENCY);
  // After dynalite: it has made (or refused) the data directory, with a clear error.
  makeDataDirPrivate(config.dataDir);
  const secret = config.signingSecret ?? localSigningSecret(config.dataDir);
  let baseUrl = config.publicUrl ?? '';
  // The embedded store is one thread every tenant's requests share: one account's calls go there a few at a time,
  // so one tenant's burst of reads never fills it ahead of another's next call.
  const client = embeddedDynamoClient(dynamo, accountStoreLanes(LOCAL_STORE_CALLS_PER_ACCOUNT));
  // Both delivery lanes redrive to one DLQ (two on AWS), which the delivery worker consumes: a job that keeps
  // failing ends its delivery visibly failed (app/webhooks/dead-letters), as on AWS.
  const deliveriesDlq = localDeliveriesDlq(config.dataDir, logger);
  const awsBatches = options.awsBatches === true;
  const local = {
    events: localQueue(config.dataDir, 'events', logger, undefined, awsBatches),
    deliveries: localQueue(config.dataDir, 'deliveries', logger, deliveriesDlq, awsBatches),
    slowDeliveries: localQueue(config.dataDir, 'slowDeliveries', logger, deliveriesDlq, awsBatches),
    sends: localQueue(config.dataDir, 'sends', logger, undefined, awsBatches),
    deliveriesDlq,
  };
  let server: Server | undefined;
  let smtp: SmtpInbound | undefined;
  let mimeParser: ThreadMimeParser | undefined;
  let closing = false;
  let reconciler: NodeJS.Timeout | undefined;
  let reconciling: Promise<unknown> = Promise.resolve();
  try {
    options.instrument?.(client);
    await createTables(client, config.tables);
    // Bodies in the data directory, as S3 holds them on AWS (a map for :memory:).
    const emailBodies = options.emailBodies?.(client) ?? localEmailBodies(config.dataDir);
    // Emails written by earlier versions (body and states inside the email item) move to their parts, once.
    await upgradeEmails(documentClient(client), config.tables, {
      retentionSeconds: config.emailRetentionSeconds,
      bodies: emailBodies,
    });
    // Suppressions stored under one key per tenant by earlier versions move to their shard, once.
    await upgradeSuppressions(documentClient(client), config.tables.suppressions);
    const links = { secret: () => Promise.resolve(secret), baseUrl: () => baseUrl };
    // Files (attachments) in the data directory beside the bodies, as S3 holds them on AWS; its download links
    // are served below, as S3 serves presigned URLs.
    const files = localFileStore(config.dataDir, links, () => (options.clock ?? Date).now());
    // Received messages are parsed in a thread of their own, time-boxed: never on the loop every tenant shares.
    mimeParser = new ThreadMimeParser({
      ...parseThreadModule(),
      budgetMs: config.inboundParseMs,
      maxHeapMb: PARSE_HEAP_MB,
    });
    const services = createServices(config, client, logger, {
      ...(options.consoleLines
        ? {
            telemetry: new PowertoolsTelemetry({ logger, metricsService: config.metricsService, routineLevel: 'info' }),
          }
        : {}),
      emailBodies,
      files,
      mimeParser,
      // The accounts' notices: notices.jsonl in the data directory and a console line (SES on AWS).
      notifier: new FileNotifier(config.dataDir),
      deliveryQueue: { send: async (jobs, delay) => local.deliveries.send(jobs.map(encodeJob), delay) },
      recoveryQueue: { send: async (step, delay) => local.deliveries.send([encodeStep(step)], delay) },
      // Locally one timer-driven queue serves both SQS delays and Scheduler's one-shot schedules.
      retries: { schedule: async (job, delay) => local.deliveries.send([encodeJob(job)], delay) },
      events: { publish: async (events, delay) => local.events.send(events.map(encodeEvent), delay) },
      // A cancelled email's timer may still fire: the send worker finds it cancelled and skips it.
      links,
      authorizerCache: { flush: async () => authorizerCache.flush() },
      sendScheduler: {
        schedule: async (emailId, at, accountId) =>
          local.sends.send([encodeSend(emailId, accountId)], Math.max(0, at - Date.now()) / 1000),
        // The timer moves: the pending message is replaced (dropped, timer and journal line too). One already in
        // flight still runs, and the send worker finds the email not due and skips it.
        reschedule: async (emailId, at, accountId) =>
          local.sends.send([encodeSend(emailId, accountId)], Math.max(0, at - Date.now()) / 1000, { replace: true }),
        cancel: async () => {},
      },
      // Claims of the process that last held this data directory are void: it is gone.
      claimEpoch: Date.now(),
      slowLane: {
        queue: { send: async (jobs, delay) => local.slowDeliveries.send(jobs.map(encodeJob), delay) },
        steps: { send: async (step, delay) => local.slowDeliveries.send([encodeStep(step)], delay) },
        arn: local.slowDeliveries.arn,
      },
      // One process runs every batch: a share per account (bench:cost gives AWS's rules instead).
      lanePolicy: options.lanePolicy ?? LANE_POLICY,
      deliveryDlqArns: [local.deliveriesDlq.arn],
      // A receiving domain's MX record names the local SMTP server's host (its port is SF_SMTP_PORT).
      receivingMx: config.host,
      // The fan-out runs here too: it wakes the waiting polls of a session it puts an event on.
      listenSignals: new InProcessListenSignals(options.clock ?? { now: () => Date.now() }),
      // A long-poll holds no gateway slot while it waits; its store calls take one each (app/listen).
      accountSlots,
      // An account's email listings in a loop take at most their share of the time (this process's, not the
      // business clock's): the store thread is left free for other tenants' calls most of it.
      listShare: new KeyedWorkShares(shareRule(LOCAL_LIST_SHARE, LOCAL_LIST_BURST_MS), {
        clock: { now: () => Date.now() },
      }),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.sender ? { sender: options.sender } : {}),
      // AWS destinations: to SF_AWS_ENDPOINT_URL when set (a stand-in, LocalStack), else AWS itself.
      awsDestinations: new AwsDestinationSender({
        timeoutMs: config.webhooks.attemptTimeoutMs,
        region: config.webhooks.aws.region,
        ...(config.webhooks.aws.endpoint ? { endpoint: config.webhooks.aws.endpoint } : {}),
      }),
    });
    const seeded = config.seed ? await seed({ ...services, usagePlans: noUsagePlans }) : undefined;
    const defaultAccountId = seeded?.accountId ?? (await findDefaultAccount(services))?.id;

    // Like the AWS functions' flush middleware: a batch's or a request's metrics are published when it ends
    // (only if SF_METRICS is on locally; the log lines are written as they happen either way).
    const flushing = flushAfter(services.telemetry);
    local.events.consume(createDispatcherHandler(services));
    const deliveryWorker = flushing(createDeliveryWorkerHandler(services));
    local.deliveries.consume(deliveryWorker);
    local.slowDeliveries.consume(deliveryWorker);
    local.deliveriesDlq.consume(deliveryWorker);
    local.sends.consume(flushing(createSendWorkerHandler(services)));
    // The journals hold every queued message, delayed retries and sends included, and re-armed them above. The
    // reconciler's first run, now and with no grace (nothing is in flight before we listen), finds what a crash
    // left between a table write and its queue message or publish.
    // A run the stop cuts short (the store closes under it) failed at nothing: the next start's first run redoes it.
    const runReconciler = (handler: () => Promise<unknown>) => () => {
      reconciling = handler().catch((error: unknown) => {
        if (!closing) logger.error('reconciler failed', error as Error);
      });
    };
    runReconciler(createReconcilerHandler({ ...services, graceSeconds: 0 }))();
    reconciler = setInterval(
      runReconciler(createReconcilerHandler(services)),
      config.webhooks.reconcileIntervalSeconds * 1000,
    );

    const api = createApiHandler(services);
    const adminToken = randomBytes(32).toString('base64url');
    const gateway = createGateway({
      authorizer: createAuthorizerHandler(services),
      cache: authorizerCache,
      api: flushing(async (event, context) => {
        const response = await api(event, context as ApiContext, {
          signal: AbortSignal.timeout(INTEGRATION_TIMEOUT_MS),
        });
        if (!response) throw new Error('API handler returned no response');
        return response;
      }),
      authCacheTtlSeconds: config.authCacheTtlSeconds,
      clock: () => services.clock.now(),
      maxBodyBytes: config.maxBodyBytes,
      maxSendBodyBytes: config.maxSendBodyBytes,
      bodyIdleTimeoutMs: config.localHttp.bodyIdleTimeoutMs,
      adminToken,
      accountSlots,
      // Polls past their account's open polls: refused before its slot, from memory (issue 28's listen flood).
      pollRefusals: new PollRefusals({
        openPolls: services.openPolls,
        counter: services.counter,
        clock: services.clock,
        generation: () => authorizerCache.generation,
      }),
    });
    const downloads = createDownloadRoute({
      files,
      secret: links.secret,
      now: () => services.clock.now(),
      stagePrefix: `/${STAGE}`,
    });
    server = createGatewayServer(async (req, res) => {
      if (!closing) {
        try {
          if (await downloads(req, res)) return;
        } catch (error) {
          logger.error('download failed', error as Error);
          if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: 'Internal server error.', status: 500, code: 'internal_error' }));
          return;
        }
        return gateway(req, res);
      }
      // Stopping: a request that arrives on a kept-alive connection is refused at once, and the connection closed.
      res.shouldKeepAlive = false;
      res
        .writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' })
        .end(
          JSON.stringify(
            errorBody({ message: 'Sendflow is shutting down; try again.', status: 503, code: 'unavailable' }),
          ),
        );
    }, config.localHttp);
    // Spans are recorded from the first request on (tracing on: the exporter's module is loaded by now).
    await services.tracing.ready();
    await listen(server, config.port, config.host);
    const { port } = server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const url = `http://${host}:${port}/${STAGE}`;
    baseUrl ||= url;
    const httpServer = server;
    // Inbound mail: an SMTP server beside the API, on the same host; what it accepts is spooled durably, then
    // stored by receiveEmail (app/inbound), as SES receiving hands it to a function on AWS.
    smtp = await startSmtpInbound({
      host: config.host,
      port: config.smtpPort,
      spool: localSpool(config.dataDir),
      accepts: async (domain) => (await receivingDomain(services, domain)) !== null,
      deliver: async (entry) => {
        const { refused } = await receiveEmail(services.inbound, arrivalOf(entry));
        for (const { accountId, reason } of refused ?? []) {
          logger.warn('Inbound message not stored for an account', {
            account_id: accountId,
            reason,
            spool_id: entry.id,
          });
        }
      },
      // Tried too often: the receiving account is shown a failed email (the operator has the message).
      onDeadLetter: async (entry, letter) => {
        await recordFailedArrival(services.inbound, arrivalOf(entry), letter.attempts);
      },
      onError: (message, error) => logger.error(message, error as Error),
      ...(options.smtpLimits ? { limits: options.smtpLimits } : {}),
      ...(config.smtpTls
        ? {
            tls: {
              key: readFileSync(config.smtpTls.keyFile, 'utf8'),
              cert: readFileSync(config.smtpTls.certFile, 'utf8'),
            },
          }
        : {}),
    }).catch((error: NodeJS.ErrnoException) => {
      // Said plainly (npm start prints the message): the API's port is fine, the SMTP server's is taken.
      if (error.code !== 'EADDRINUSE') throw error;
      throw new Error(
        `inbound SMTP port ${config.smtpPort} is already in use: set SF_SMTP_PORT to another port, or SF_SMTP_PORT=0 for any free port.`,
      );
    });
    const inbound = smtp;
    return {
      url,
      port,
      smtpPort: inbound.port,
      inbound,
      dynamoEndpoint: dynamo.endpoint,
      adminToken,
      ...(seeded ? { seeded } : {}),
      ...(defaultAccountId ? { defaultAccountId } : {}),
      services,
      authorizerCache,
      accountSlots,
      queues: local,
      async stop() {
        closing = true;
        clearInterval(reconciler);
        const deadline = Date.now() + STOP_MS;
        // No new mail; a message being stored finishes (what is spooled and not stored waits for the next start).
        await Promise.race([inbound.stop(), sleep(STOP_MS / 2)]);
        const left = () => Math.max(0, deadline - Date.now());
        // Stop listening and answer the requests in flight (their messages reach the journals); then the queues
        // take no new batch, and what is unfinished when the time is up stays journaled for the next start.
        const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
        httpServer.closeIdleConnections();
        await Promise.race([closed, sleep(left())]);
        await Promise.all(Object.values(local).map((q) => q.drain(left())));
        await Promise.all(Object.values(local).map((q) => q.stop(0)));
        await Promise.race([reconciling, sleep(left())]);
        // The delivery figures the worker still holds (app/webhooks/figure-tally) go before the store closes.
        await Promise.race([services.figureTally.flush(), sleep(left())]);
        // The spans still queued for export (tracing on), within what is left of the time.
        await Promise.race([services.tracing.flush(), sleep(Math.min(left(), 1_000))]);
        httpServer.closeAllConnections();
        await (services.sender as Partial<{ close(): Promise<void> }>).close?.();
        await mimeParser?.close();
        client.destroy();
        await dynamo.close();
      },
    };
  } catch (error) {
    // A start that failed (a port in use) after the work began: the reconciler's first run and the batches the
    // journals re-armed are using the store. As stop() does, they end (or are cut short, their work left in the
    // journals and tables for the next start) before the store closes, so the failure is all that is said.
    closing = true;
    clearInterval(reconciler);
    server?.close();
    await smtp?.stop();
    const deadline = Date.now() + STOP_MS;
    const left = () => Math.max(0, deadline - Date.now());
    await Promise.all(Object.values(local).map((q) => q.stop(left())));
    await Promise.race([reconciling, sleep(left())]);
    await mimeParser?.close();
    client.destroy();
    await dynamo.close();
    throw error;
  }
}

/**
 * Batches each local queue hands out at once: its "Lambda concurrency". A delivery batch spends most of its
 * time waiting on receivers and on the DynamoDB thread, so the deliveries queue keeps more of them going.
 */
export const LOCAL_QUEUE_CONCURRENCY: Readonly<Record<QueueName, number>> = {
  events: 2,
  deliveries: 8,
  slowDeliveries: 2,
  sends: 4,
};

/**
 * Batches each local queue hands out beyond its concurrency, only to accounts with nothing in flight: one
 * tenant's burst holding every batch does not make another's first send or delivery wait for one to end.
 */
export const LOCAL_RESERVED_BATCHES = 2;

/**
 * API requests of one account the local gateway serves at once; its others wait their turn (KeyedSlots). One
 * process serves every tenant: this bounds one tenant's share of it, and of the embedded DynamoDB's thread.
 */
export const LOCAL_ACCOUNT_CONCURRENCY = 4;

/**
 * The share of the time one account's email listings may take after a burst (LOCAL_LIST_BURST_MS of listing work):
 * a page of 100 emails with their histories is some 300 store reads, and a tenant listing in a loop would otherwise
 * keep the one process and its store thread busy for every other tenant (issue 28's filtered lists). A user paging
 * through a few pages never waits; a loop gets a listing every ~4 times its duration.
 */
export const LOCAL_LIST_SHARE = 0.25;
export const LOCAL_LIST_BURST_MS = 1_000;

/** The parse thread's heap ceiling: a 30 MB message parses in a few hundred MB; past it the parse fails, not the process. */
const PARSE_HEAP_MB = 1024;

/** A spool entry as receiveEmail's contract has it (SES hands the same on AWS). */
function arrivalOf(entry: SpoolEntry): InboundMessage {
  return {
    raw: entry.raw,
    mailFrom: entry.mailFrom,
    recipients: entry.recipients,
    verdicts: null,
    receivedAt: entry.receivedAt,
    sourceId: entry.id,
  };
}

/**
 * Store calls of one account (or one key's authorizer reads) in the embedded DynamoDB's thread at once; its others
 * wait their turn. The thread interleaves the calls it holds: another tenant's call shares it with at most this many
 * of a flood's (a listing's history reads, a burst of polls' reads), however many that tenant made. The runtime's
 * own work (the queues' consumers, the reconciler) is bounded by the queues' concurrency instead: a global bound
 * here throttled the delivery pipeline.
 */
export const LOCAL_STORE_CALLS_PER_ACCOUNT = 4;

/** Wraps a handler so the telemetry it buffered is published when each invocation ends, however it ends. */
function flushAfter(telemetry: Pick<Telemetry, 'flush'>) {
  return <A extends unknown[], R>(handler: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await handler(...args);
      } finally {
        telemetry.flush();
      }
    };
}

function queueJournal(dataDir: string, name: string): QueueJournal | undefined {
  if (dataDir === ':memory:') return undefined;
  mkdirSync(join(dataDir, 'queues'), { recursive: true, mode: 0o700 });
  return QueueJournal.open(join(dataDir, 'queues', `${name}.journal`));
}

/** How long a dead letter is tried: SQS keeps a DLQ's messages 14 days (lib/constructs/queues.ts, DLQ_RETENTION). */
const DLQ_RETENTION_MS = 14 * 86_400_000;

/**
 * The delivery lanes' DLQ: journaled like them; a message is received until its delivery is settled, once per
 * visibility timeout of the deliveries queue, for as long as SQS would keep it (a DLQ has no DLQ of its own:
 * what is still failing then, e.g. a body that is no job, is set aside in its journal's dead letters).
 */
function localDeliveriesDlq(dataDir: string, logger: Logger): InProcessQueue {
  const journal = queueJournal(dataDir, 'deliveriesDlq');
  const visibilityTimeoutMs = visibilityTimeoutSeconds(queues.deliveries) * 1000;
  return new InProcessQueue('sendflow-deliveriesDlq', {
    batchSize: LOCAL_BATCH_SIZE,
    visibilityTimeoutMs,
    maxReceiveCount: Math.ceil(DLQ_RETENTION_MS / visibilityTimeoutMs),
    concurrency: 1,
    onError: (error) => logger.error("queue deliveriesDlq: could not journal a batch's outcome", error),
    ...(journal ? { journal } : {}),
  });
}

/**
 * The most records a local batch holds: one process runs every batch, so the AWS event sources' larger batches
 * (gathered over a batching window, to share an invocation's time) would only hold more of its attempts at once.
 */
export const LOCAL_BATCH_SIZE = 10;

function localQueue(
  dataDir: string,
  queue: QueueName,
  logger: Logger,
  redriveTo?: InProcessQueue,
  awsBatches = false,
): InProcessQueue {
  const spec = queues[queue];
  const journal = queueJournal(dataDir, queue);
  return new InProcessQueue(`sendflow-${queue}`, {
    batchSize: awsBatches ? spec.batchSize : Math.min(spec.batchSize, LOCAL_BATCH_SIZE),
    visibilityTimeoutMs: visibilityTimeoutSeconds(spec) * 1000,
    maxReceiveCount: spec.maxReceiveCount,
    concurrency: LOCAL_QUEUE_CONCURRENCY[queue],
    // Fair across accounts (and batches kept for accounts with nothing in flight); sends also keep one pending message per email (a restart's re-queue doubles nothing).
    ...(queue === 'sends'
      ? {
          groupOf: (body: string) => decodeSend(body)?.accountId,
          dedupeKey: (body: string) => decodeSend(body)?.emailId,
        }
      : {}),
    ...(queue === 'deliveries' || queue === 'slowDeliveries' ? { groupOf: deliveryMessageAccount } : {}),
    ...(queue === 'events' ? { groupOf: eventMessageAccount } : {}),
    reservedBatches: LOCAL_RESERVED_BATCHES,
    onError: (error) => logger.error(`queue ${queue}: could not journal a batch's outcome`, error),
    ...(journal ? { journal } : {}),
    ...(redriveTo ? { redriveTo } : {}),
  });
}

/** Creates the default account and its key unless the store has it (other accounts do not count). */
async function seed(deps: Parameters<typeof createAccount>[0]) {
  if (await findDefaultAccount(deps)) return undefined;
  const account = await createAccount(deps, 'free', { isDefault: true });
  const { secret } = await createAccountKey(deps, { accountId: account.id, mode: 'test', name: DEFAULT_KEY_NAME });
  return { accountId: account.id, apiKey: secret };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** The local signing secret: kept in the data directory so links survive restarts; per process in memory. */
function localSigningSecret(dataDir: string): string {
  if (dataDir === ':memory:') return randomBytes(32).toString('base64url');
  const file = join(dataDir, 'signing-secret');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64url'), { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  }
  chmodSync(file, PRIVATE_FILE_MODE); // one an older version left readable
  return readFileSync(file, 'utf8').trim();
}
