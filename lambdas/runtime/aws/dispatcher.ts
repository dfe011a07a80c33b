// Lambda entry point of the dispatcher (events queue → deliveries queue): wiring only, built once per cold start.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { flushTelemetry } from '../../handlers/middleware/flush-telemetry';
import { createDispatcherHandler } from '../../handlers/queue/dispatcher';
import { deliveriesQueue } from './plugs/queues';
import { sesNotices } from './plugs/ses';
import { createAwsServices } from './services';

// A warning or pause judged here is told to its account by e-mail (SF_NOTICE_FROM). Exported for tests.
export const services = createAwsServices('sendflow-dispatcher', [deliveriesQueue, sesNotices]);

export const handler = middy(createDispatcherHandler(services))
  .use(injectLambdaContext(services.logger, { resetKeys: true }))
  // The events' spans are exported before the invocation ends (nothing else is buffered here).
  .use(flushTelemetry(services.telemetry, services.tracing));
