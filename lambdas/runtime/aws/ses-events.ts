// Lambda entry point of the SES event mapper (provider-events queue → our events on the events queue): wiring
// only, built once per cold start. It reads no table: the message tags on every SendEmail say whose email it is.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { createSesEventsHandler } from '../../adapters/ses/ses-events-handler';
import { eventsQueue } from './plugs/queues';
import { createAwsServices } from './services';

const services = createAwsServices('sendflow-ses-events', [eventsQueue]);

export const handler = middy(createSesEventsHandler(services)).use(
  injectLambdaContext(services.logger, { resetKeys: true }),
);
