// Unit tests for the AWS wiring (lambdas/runtime/aws/services.ts): each function gets the adapters it asks
// for, built on the clients given; a missing SF_* variable stops the cold start with every name listed; a port
// a function was not given refuses to work instead of doing something else.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { AwsRetryScheduler, QueueRetryScheduler } from '../../lambdas/adapters/aws/retry-scheduler';
import { SqsDeliveryQueue, SqsEventPublisher } from '../../lambdas/adapters/aws/sqs';
import { tableEnvVar, tableNames } from '../../lambdas/manifest';
import { createAwsServices, missingAwsVariables } from '../../lambdas/runtime/aws/services';
import { ConfigError } from '../../lambdas/runtime/config';

const sqs = mockClient(SQSClient);
const scheduler = mockClient(SchedulerClient);

const tablesEnv = Object.fromEntries(tableNames.map((table) => [tableEnvVar(table), `${table}-table`]));
const awsEnv = {
  SF_EVENTS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/events',
  SF_DELIVERIES_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries',
  SF_DELIVERIES_QUEUE_ARN: 'arn:aws:sqs:eu-west-1:123456789012:deliveries',
  SF_SCHEDULE_GROUP: 'SendflowApi-retries',
  SF_SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
  SF_SCHEDULER_DLQ_ARN: 'arn:aws:sqs:eu-west-1:123456789012:retry-dlq',
};
const clients = () => ({
  dynamo: new DynamoDBClient({ region: 'eu-west-1' }),
  sqs: new SQSClient({ region: 'eu-west-1' }),
  scheduler: new SchedulerClient({ region: 'eu-west-1' }),
});
const job = { deliveryId: 'dlv_1', webhookId: 'wh_1', attempt: 2 };

beforeEach(() => {
  sqs.reset();
  scheduler.reset();
  sqs.on(SendMessageBatchCommand).resolves({ Failed: [] });
  scheduler.on(CreateScheduleCommand).resolves({ ScheduleArn: 'arn' });
});

describe('createAwsServices', () => {
  it('gives the delivery worker the Scheduler-backed retries on the configured queue and group', async () => {
    // Arrange
    const services = createAwsServices(
      'sendflow-delivery',
      { retries: 'scheduler' },
      { env: { ...tablesEnv, ...awsEnv }, clients: clients() },
    );

    // Act
    await services.retries.schedule(job, 5);
    await services.retries.schedule(job, 300);

    // Assert
    expect(services.retries).toBeInstanceOf(AwsRetryScheduler);
    expect(sqs).toHaveReceivedCommandWith(SendMessageBatchCommand, { QueueUrl: awsEnv.SF_DELIVERIES_QUEUE_URL });
    expect(scheduler).toHaveReceivedCommandWith(CreateScheduleCommand, {
      GroupName: awsEnv.SF_SCHEDULE_GROUP,
      Target: expect.objectContaining({
        Arn: awsEnv.SF_DELIVERIES_QUEUE_ARN,
        RoleArn: awsEnv.SF_SCHEDULER_ROLE_ARN,
        DeadLetterConfig: { Arn: awsEnv.SF_SCHEDULER_DLQ_ARN },
      }),
    });
  });

  it('gives the dispatcher the deliveries queue, the API the events queue, the reconciler queue-only retries', () => {
    const env = { ...tablesEnv, ...awsEnv };
    expect(createAwsServices('d', { deliveryQueue: true }, { env, clients: clients() }).deliveryQueue).toBeInstanceOf(
      SqsDeliveryQueue,
    );
    expect(createAwsServices('a', { events: true }, { env, clients: clients() }).events).toBeInstanceOf(
      SqsEventPublisher,
    );
    expect(createAwsServices('r', { retries: 'queue' }, { env, clients: clients() }).retries).toBeInstanceOf(
      QueueRetryScheduler,
    );
  });

  it('fails the cold start naming every missing variable the function needs', () => {
    // Arrange
    const { SF_SCHEDULE_GROUP: _group, SF_SCHEDULER_DLQ_ARN: _dlq, ...partial } = awsEnv;

    // Act
    const start = () =>
      createAwsServices('sendflow-delivery', { retries: 'scheduler' }, { env: { ...tablesEnv, ...partial } });

    // Assert
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(/SF_SCHEDULE_GROUP: required by sendflow-delivery, not set/);
    expect(start).toThrow(/SF_SCHEDULER_DLQ_ARN: required by sendflow-delivery, not set/);
  });

  it('asks each function only for what it uses', () => {
    const config = { aws: {} } as Parameters<typeof missingAwsVariables>[0];
    expect(missingAwsVariables(config, {})).toEqual([]);
    expect(missingAwsVariables(config, { events: true })).toEqual(['SF_EVENTS_QUEUE_URL']);
    expect(missingAwsVariables(config, { deliveryQueue: true })).toEqual(['SF_DELIVERIES_QUEUE_URL']);
    expect(missingAwsVariables(config, { retries: 'queue' })).toEqual(['SF_DELIVERIES_QUEUE_URL']);
    expect(missingAwsVariables(config, { retries: 'scheduler' })).toEqual([
      'SF_DELIVERIES_QUEUE_URL',
      'SF_DELIVERIES_QUEUE_ARN',
      'SF_SCHEDULE_GROUP',
      'SF_SCHEDULER_ROLE_ARN',
      'SF_SCHEDULER_DLQ_ARN',
    ]);
  });

  it('still reports missing table variables as configuration errors', () => {
    expect(() => createAwsServices('sendflow-api', {}, { env: {} })).toThrow(/SF_TABLE_WEBHOOKS/);
  });

  it('makes a port the function was not given refuse to work, naming the function', async () => {
    // Arrange
    const services = createAwsServices(
      'sendflow-dispatcher',
      { deliveryQueue: true },
      {
        env: { ...tablesEnv, SF_DELIVERIES_QUEUE_URL: awsEnv.SF_DELIVERIES_QUEUE_URL },
        clients: clients(),
      },
    );

    // Act & Assert
    await expect(services.retries.schedule(job, 1)).rejects.toThrow(
      'The retry scheduler is not wired into sendflow-dispatcher',
    );
    await expect(services.events.publish([])).rejects.toThrow('The events queue is not wired into sendflow-dispatcher');
    expect(sqs).not.toHaveReceivedCommand(SendMessageBatchCommand);
  });
});
