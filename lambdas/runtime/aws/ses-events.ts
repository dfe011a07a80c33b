// Lambda entry point of the SES event mapper (provider-events queue → our events, processed here: history,
// suppressions, webhook fan-out onto the deliveries queue): wiring only, built once per cold start. The message
// tags on every SendEmail say whose email it is, and carry its own tags when they fit SES's limits; otherwise the
// email is read (one GetItem) for them.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { createSesEventsHandler } from '../../adapters/ses/ses-events-handler';
import { flushTelemetry } from '../../handlers/middleware/flush-telemetry';
import { deliveriesQueue } from './plugs/queues';
import { sesNotices } from './plugs/ses';
import { createAwsServices } from './services';

// A warning or pause judged here is told to its account by e-mail (SF_NOTICE_FROM).
export const services = createAwsServices('sendflow-ses-events', [deliveriesQueue, sesNotices]);

export const handler = middy(createSesEventsHandler(services))
  .use(injectLambdaContext(services.logger, { resetKeys: true }))
  // The events' spans are exported before the invocation ends.
  .use(flushTelemetry(services.telemetry, services.tracing));
