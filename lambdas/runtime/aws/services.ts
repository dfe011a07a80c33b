// The AWS wiring every Lambda entry point shares: configuration, logger and SDK clients built once per cold
// start, then the same createServices as the local runtime with the SQS, Scheduler, Secrets Manager and SES
// adapters. Each function names the AWS adapters it uses; a variable those need that the stack did not set
// stops the cold start with a message naming it, instead of a vague failure on the first message.
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SQSClient } from '@aws-sdk/client-sqs';
import { ApiGatewayAuthorizerCache } from '../../adapters/aws/authorizer-cache';
import { AwsRetryScheduler, QueueRetryScheduler } from '../../adapters/aws/retry-scheduler';
import { fetchSigningSecret } from '../../adapters/aws/secrets';
import { AwsSendScheduler, QueueSendScheduler, SqsSendQueue } from '../../adapters/aws/send-scheduler';
import { SqsDeliveryQueue, SqsEventPublisher } from '../../adapters/aws/sqs';
import { SesDomainProvider } from '../../adapters/ses/ses-domains';
import { SesEmailProvider } from '../../adapters/ses/ses-provider';
import type { LinkSigner, SendScheduler } from '../../app/emails/ports';
import type { AuthorizerCache } from '../../app/ports';
import type { DeliveryQueue, EventPublisher, RetryScheduler } from '../../app/webhooks/ports';
import { STAGE } from '../../manifest';
import { type Config, ConfigError } from '../config';
import { createServices, type RuntimeAdapters, type Services } from '../services';
import { createAwsBase } from './base';
import { type AwsWiring, loadAwsWiring } from './env';

export { type AwsBase, createAwsBase } from './base';

/** The AWS adapters a function uses; the others are stand-ins that refuse to work. */
export interface AwsNeeds {
  /** SqsEventPublisher on the events queue (the API: emails publish events). */
  readonly events?: boolean;
  /** SqsDeliveryQueue (the dispatcher's fan-out). */
  readonly deliveryQueue?: boolean;
  /**
   * `scheduler`: AwsRetryScheduler, SQS under a minute and Scheduler beyond (the delivery worker).
   * `queue`: QueueRetryScheduler, the deliveries queue only (the reconciler, which re-queues overdue attempts).
   */
  readonly retries?: 'scheduler' | 'queue';
  /**
   * `scheduler`: AwsSendScheduler, SQS under a minute and one-shot schedules beyond, cancellable (the API).
   * `queue`: QueueSendScheduler, the sends queue only (the reconciler, which re-queues overdue sends).
   */
  readonly sends?: 'scheduler' | 'queue';
  /** The link signer: the signing secret (read once from Secrets Manager) and the public base URL (the API). */
  readonly links?: boolean;
  /** Live-mode email through SES v2 with the stack's configuration set (the API and the send worker). */
  readonly ses?: boolean;
  /** Sending domains as SES identities with Easy DKIM (the API; the reconciler re-checks pending ones). */
  readonly domains?: boolean;
  /** The slow deliveries lane (the delivery worker). */
  readonly slowLane?: boolean;
}

/** SDK clients, injectable for tests; by default one of each per cold start. */
export interface AwsClients {
  readonly dynamo?: DynamoDBClient;
  readonly sqs?: SQSClient;
  readonly scheduler?: SchedulerClient;
  readonly secrets?: SecretsManagerClient;
  readonly ses?: SESv2Client;
  readonly apiGateway?: APIGatewayClient;
}

/** Every problem at once: the variables `needs` require that the environment lacks. */
export function missingAwsVariables(config: Config, needs: AwsNeeds, wiring: AwsWiring = {}): string[] {
  const required: [string, string | undefined][] = [];
  // The send worker relays the events it records with a recipient's state (email.failed, email.suppressed):
  // a function that sends needs the events queue too.
  if (needs.events || needs.ses) required.push(['SF_EVENTS_QUEUE_URL', config.aws.eventsQueueUrl]);
  if (needs.ses) required.push(['SF_SES_CONFIGURATION_SET', wiring.sesConfigurationSet]);
  if (needs.domains) required.push(['SF_SES_IDENTITY_OWNER', wiring.sesIdentityOwner]);
  if (needs.deliveryQueue || needs.retries) required.push(['SF_DELIVERIES_QUEUE_URL', config.aws.deliveriesQueueUrl]);
  if (needs.retries === 'scheduler') {
    required.push(
      ['SF_DELIVERIES_QUEUE_ARN', config.aws.deliveriesQueueArn],
      ['SF_SCHEDULE_GROUP', config.aws.scheduleGroup],
      ['SF_SCHEDULER_ROLE_ARN', config.aws.schedulerRoleArn],
      ['SF_SCHEDULER_DLQ_ARN', config.aws.schedulerDlqArn],
    );
  }
  if (needs.slowLane) {
    required.push(
      ['SF_SLOW_DELIVERIES_QUEUE_URL', wiring.slowDeliveriesQueueUrl],
      ['SF_SLOW_DELIVERIES_QUEUE_ARN', wiring.slowDeliveriesQueueArn],
    );
  }
  if (needs.sends) required.push(['SF_SENDS_QUEUE_URL', wiring.sendsQueueUrl]);
  if (needs.sends === 'scheduler') {
    required.push(
      ['SF_SENDS_QUEUE_ARN', wiring.sendsQueueArn],
      ['SF_SENDS_SCHEDULE_GROUP', wiring.sendsScheduleGroup],
      ['SF_SENDS_SCHEDULER_ROLE_ARN', wiring.sendsSchedulerRoleArn],
      ['SF_SENDS_SCHEDULER_DLQ_ARN', wiring.sendsSchedulerDlqArn],
    );
  }
  if (needs.links) {
    required.push(
      ['SF_SIGNING_SECRET_ID', wiring.signingSecretId ?? config.signingSecret],
      ['SF_PUBLIC_URL', config.publicUrl],
    );
  }
  return required.filter(([, value]) => !value).map(([name]) => name);
}

export async function createAwsServices(
  serviceName: string,
  needs: AwsNeeds,
  options: { env?: NodeJS.ProcessEnv; clients?: AwsClients } = {},
): Promise<Services> {
  const env = options.env ?? process.env;
  const { config, logger, dynamo } = createAwsBase(serviceName, env, options.clients?.dynamo);
  const wiring = loadAwsWiring(env);
  const missing = missingAwsVariables(config, needs, wiring);
  if (missing.length) {
    throw new ConfigError(missing.map((name) => `${name}: required by ${serviceName}, not set`));
  }
  const { aws } = config;
  const now = () => Date.now();
  const needsSqs = needs.events || needs.ses || needs.deliveryQueue || needs.retries || needs.sends || needs.slowLane;
  const sqs = needsSqs ? (options.clients?.sqs ?? new SQSClient({})) : null;
  const needsScheduler = needs.retries === 'scheduler' || needs.sends === 'scheduler';
  const scheduler = needsScheduler ? (options.clients?.scheduler ?? new SchedulerClient({})) : null;
  const queue = sqs && aws.deliveriesQueueUrl ? new SqsDeliveryQueue(sqs, aws.deliveriesQueueUrl) : null;

  let retries: RetryScheduler = unavailable(serviceName, 'retry scheduler');
  if (needs.retries === 'queue' && queue) retries = new QueueRetryScheduler(queue);
  if (needs.retries === 'scheduler' && queue && scheduler) {
    retries = new AwsRetryScheduler({
      scheduler,
      queue,
      groupName: String(aws.scheduleGroup),
      queueArn: String(aws.deliveriesQueueArn),
      roleArn: String(aws.schedulerRoleArn),
      dlqArn: String(aws.schedulerDlqArn),
      now,
    });
  }

  const sendQueue = sqs && wiring.sendsQueueUrl ? new SqsSendQueue(sqs, wiring.sendsQueueUrl) : null;
  let sendScheduler: SendScheduler = unavailable(serviceName, 'send scheduler');
  if (needs.sends === 'queue' && sendQueue) sendScheduler = new QueueSendScheduler(sendQueue, now);
  if (needs.sends === 'scheduler' && sendQueue && scheduler) {
    sendScheduler = new AwsSendScheduler({
      scheduler,
      queue: sendQueue,
      groupName: String(wiring.sendsScheduleGroup),
      queueArn: String(wiring.sendsQueueArn),
      roleArn: String(wiring.sendsSchedulerRoleArn),
      dlqArn: String(wiring.sendsSchedulerDlqArn),
      now,
    });
  }

  let links: LinkSigner = unavailableLinks(serviceName);
  if (needs.links) {
    const secret =
      config.signingSecret ??
      (await fetchSigningSecret(
        options.clients?.secrets ?? new SecretsManagerClient({}),
        String(wiring.signingSecretId),
      ));
    const baseUrl = String(config.publicUrl);
    links = { secret, baseUrl: () => baseUrl };
  }

  const deliveryQueue: DeliveryQueue =
    needs.deliveryQueue && queue ? queue : unavailable(serviceName, 'deliveries queue');
  const events: EventPublisher =
    (needs.events || needs.ses) && sqs && aws.eventsQueueUrl
      ? new SqsEventPublisher(sqs, aws.eventsQueueUrl)
      : unavailable(serviceName, 'events queue');
  const ses = needs.ses || needs.domains ? (options.clients?.ses ?? new SESv2Client({})) : null;
  // Live mode goes through SES; test mode stays on the simulator (createServices picks per mode).
  const liveProvider =
    ses && needs.ses
      ? new SesEmailProvider({
          // No SDK retries for sending: a retried SendEmail after a reset may be a second copy (the provider
          // retries throttling itself, and the send worker what surely did not reach SES).
          client: options.clients?.ses ?? new SESv2Client({ maxAttempts: 1 }),
          configurationSet: String(wiring.sesConfigurationSet),
        })
      : undefined;
  const authorizerCache: AuthorizerCache = aws.restApiId
    ? new ApiGatewayAuthorizerCache(options.clients?.apiGateway ?? new APIGatewayClient({}), aws.restApiId, STAGE)
    : {
        flush: () =>
          Promise.reject(new Error(`The authorizer cache is not wired into ${serviceName} (see runtime/aws).`)),
      };
  const adapters: RuntimeAdapters = {
    authorizerCache,
    deliveryQueue,
    retries,
    events,
    sendScheduler,
    links,
    ...(liveProvider ? { liveProvider } : {}),
    ...(ses && needs.domains
      ? { liveDomainProvider: new SesDomainProvider(ses, { owner: String(wiring.sesIdentityOwner) }) }
      : {}),
    ...(sqs && needs.slowLane
      ? {
          slowLane: {
            queue: new SqsDeliveryQueue(sqs, String(wiring.slowDeliveriesQueueUrl)),
            arn: String(wiring.slowDeliveriesQueueArn),
          },
        }
      : {}),
  };
  return createServices(config, dynamo, logger, adapters);
}

/** A port this function was not given: any use is a wiring bug, reported as such. */
function unavailable(
  serviceName: string,
  port: string,
): DeliveryQueue & RetryScheduler & EventPublisher & SendScheduler {
  const refuse = () => Promise.reject(new Error(`The ${port} is not wired into ${serviceName} (see runtime/aws).`));
  return { send: refuse, schedule: refuse, publish: refuse, cancel: refuse };
}

/** Links for a function that neither signs nor verifies them: reading the secret is a wiring bug. */
function unavailableLinks(serviceName: string): LinkSigner {
  const refuse = (): never => {
    throw new Error(`The link signer is not wired into ${serviceName} (see runtime/aws).`);
  };
  return {
    get secret(): string {
      return refuse();
    },
    baseUrl: refuse,
  };
}
