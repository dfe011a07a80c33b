// Lambda entry point of the SES event mapper (provider-events queue → our events, processed here: history,
// suppressions, webhook fan-out onto the deliveries queue): wiring only, built once per cold start. It reads no
// table to map: the message tags on every SendEmail say whose email it is.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { createSesEventsHandler } from '../../adapters/ses/ses-events-handler';
import { flushTelemetry } from '../../handlers/middleware/flush-telemetry';
import { deliveriesQueue } from './plugs/queues';
import { createAwsServices } from './services';

const services = createAwsServices('sendflow-ses-events', [deliveriesQueue]);

export const handler = middy(createSesEventsHandler(services))
  .use(injectLambdaContext(services.logger, { resetKeys: true }))
  // The events' spans are exported before the invocation ends.
  .use(flushTelemetry(services.telemetry, services.tracing));
