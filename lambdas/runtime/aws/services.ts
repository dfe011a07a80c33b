// The AWS wiring every Lambda entry point shares: configuration, logger and SDK clients built once per cold
// start, then the same createServices as the local runtime with the SQS and Scheduler adapters. Each function
// names the AWS adapters it uses; a variable those need that the stack did not set stops the cold start with
// a message naming it, instead of a vague failure on the first message.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { AwsRetryScheduler, QueueRetryScheduler } from '../../adapters/aws/retry-scheduler';
import { SqsDeliveryQueue, SqsEventPublisher } from '../../adapters/aws/sqs';
import type { DeliveryQueue, EventPublisher, RetryScheduler } from '../../app/webhooks/ports';
import { type Config, ConfigError } from '../config';
import { createServices, type Services } from '../services';
import { createAwsBase } from './base';

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
}

/** SDK clients, injectable for tests; by default one of each per cold start. */
export interface AwsClients {
  readonly dynamo?: DynamoDBClient;
  readonly sqs?: SQSClient;
  readonly scheduler?: SchedulerClient;
}

/** Every problem at once: the variables `needs` require that the environment lacks. */
export function missingAwsVariables(config: Config, needs: AwsNeeds): string[] {
  const required: [string, string | undefined][] = [];
  if (needs.events) required.push(['SF_EVENTS_QUEUE_URL', config.aws.eventsQueueUrl]);
  if (needs.deliveryQueue || needs.retries) required.push(['SF_DELIVERIES_QUEUE_URL', config.aws.deliveriesQueueUrl]);
  if (needs.retries === 'scheduler') {
    required.push(
      ['SF_DELIVERIES_QUEUE_ARN', config.aws.deliveriesQueueArn],
      ['SF_SCHEDULE_GROUP', config.aws.scheduleGroup],
      ['SF_SCHEDULER_ROLE_ARN', config.aws.schedulerRoleArn],
      ['SF_SCHEDULER_DLQ_ARN', config.aws.schedulerDlqArn],
    );
  }
  return required.filter(([, value]) => !value).map(([name]) => name);
}

export function createAwsServices(
  serviceName: string,
  needs: AwsNeeds,
  options: { env?: NodeJS.ProcessEnv; clients?: AwsClients } = {},
): Services {
  const { config, logger, dynamo } = createAwsBase(serviceName, options.env, options.clients?.dynamo);
  const missing = missingAwsVariables(config, needs);
  if (missing.length) {
    throw new ConfigError(missing.map((name) => `${name}: required by ${serviceName}, not set`));
  }
  const { aws } = config;
  const sqs = needs.events || needs.deliveryQueue || needs.retries ? (options.clients?.sqs ?? new SQSClient({})) : null;
  const queue = sqs && aws.deliveriesQueueUrl ? new SqsDeliveryQueue(sqs, aws.deliveriesQueueUrl) : null;

  let retries: RetryScheduler = unavailable(serviceName, 'retry scheduler');
  if (needs.retries === 'queue' && queue) retries = new QueueRetryScheduler(queue);
  if (needs.retries === 'scheduler' && queue) {
    retries = new AwsRetryScheduler({
      scheduler: options.clients?.scheduler ?? new SchedulerClient({}),
      queue,
      groupName: String(aws.scheduleGroup),
      queueArn: String(aws.deliveriesQueueArn),
      roleArn: String(aws.schedulerRoleArn),
      dlqArn: String(aws.schedulerDlqArn),
      now: () => Date.now(),
    });
  }
  const deliveryQueue: DeliveryQueue =
    needs.deliveryQueue && queue ? queue : unavailable(serviceName, 'deliveries queue');
  const events: EventPublisher =
    needs.events && sqs && aws.eventsQueueUrl
      ? new SqsEventPublisher(sqs, aws.eventsQueueUrl)
      : unavailable(serviceName, 'events queue');
  return createServices(config, dynamo, logger, { deliveryQueue, retries, events });
}

/** A port this function was not given: any use is a wiring bug, reported as such. */
function unavailable(serviceName: string, port: string): DeliveryQueue & RetryScheduler & EventPublisher {
  const refuse = () => Promise.reject(new Error(`The ${port} is not wired into ${serviceName} (see runtime/aws).`));
  return { send: refuse, schedule: refuse, publish: refuse };
}
