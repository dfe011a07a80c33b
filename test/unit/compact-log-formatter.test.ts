// Unit tests of the log line's shape on AWS (lambdas/adapters/telemetry/compact-log-formatter.ts): what
// injectLambdaContext brings is cut to the invocation's request id (and cold_start on a cold start only); the
// function's name, ARN and memory (its log group and configuration say them), the sampling rate and the X-Ray
// id (tracing is off) are left out. Level and timestamp stay: Lambda filters JSON logs by them.
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CompactLogFormatter } from '../../lambdas/adapters/telemetry/compact-log-formatter';
import { createLogger } from '../../lambdas/runtime/logger';
import { type CapturedStdout, captureStdout } from '../support/stdout';

const context = {
  awsRequestId: '8f507cfc-1b2a-4697-b07a-ac58fc914c95',
  functionName: 'SendflowApi-prod-DeliveryPipelineDeliveryFunctionAB12CD34-EfGh5678Ij90',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:SendflowApi-prod-Delivery',
  memoryLimitInMB: '512',
} as Context;

let stdout: CapturedStdout;
let traceId: string | undefined;
beforeEach(() => {
  stdout = captureStdout();
  traceId = process.env._X_AMZN_TRACE_ID;
  process.env._X_AMZN_TRACE_ID = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0';
});
afterEach(() => {
  stdout.restore();
  if (traceId === undefined) delete process.env._X_AMZN_TRACE_ID;
  else process.env._X_AMZN_TRACE_ID = traceId;
});

describe('CompactLogFormatter', () => {
  it("writes level, message, timestamp, service, the request id and the line's own keys, nothing else", () => {
    // Arrange
    const logger = new Logger({
      serviceName: 'sendflow-delivery',
      logLevel: 'INFO',
      logFormatter: new CompactLogFormatter(),
    });
    logger.addContext(context);

    // Act
    logger.info('webhook attempt', { delivery_id: 'dlv_1' });

    // Assert
    expect(stdout.lines()).toEqual([
      {
        level: 'INFO',
        message: 'webhook attempt',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        service: 'sendflow-delivery',
        function_request_id: context.awsRequestId,
        delivery_id: 'dlv_1',
      },
    ]);
  });

  it('marks a cold start, once', () => {
    // Arrange: the first invocation of an on-demand container is its cold start (Lambda sets the type).
    process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
    const logger = new Logger({
      serviceName: 'sendflow-delivery',
      logLevel: 'INFO',
      logFormatter: new CompactLogFormatter(),
    });

    // Act
    logger.addContext(context);
    logger.info('first');
    logger.addContext(context);
    logger.info('second');

    delete process.env.AWS_LAMBDA_INITIALIZATION_TYPE;

    // Assert
    expect(stdout.lines().map((line) => line.cold_start)).toEqual([true, undefined]);
  });

  it("keeps an error's name, message and stack (on stderr, where Powertools writes errors)", () => {
    // Arrange
    const logger = new Logger({
      serviceName: 'sendflow-api',
      logLevel: 'INFO',
      logFormatter: new CompactLogFormatter(),
    });
    const written: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(((chunk: string) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write);

    // Act
    logger.error('unhandled error', new Error('boom'));
    stderr.mockRestore();

    // Assert
    expect(JSON.parse(written.join(''))).toEqual(
      expect.objectContaining({
        level: 'ERROR',
        error: expect.objectContaining({ name: 'Error', message: 'boom', stack: expect.any(String) }),
      }),
    );
  });

  it("is the runtime's logger's formatter", () => {
    // Arrange
    const logger = createLogger({ logLevel: 'INFO' }, 'sendflow-api');
    logger.addContext(context);

    // Act
    logger.info('api request');

    // Assert
    expect(Object.keys(stdout.lines()[0] ?? {})).not.toContain('function_arn');
    expect(stdout.lines()[0]).toHaveProperty('function_request_id', context.awsRequestId);
  });
});
