// Lambda entry point of the inbound function (SES receipt rule → Lambda action, Event invocation): reads the
// message SES stored and hands it to receiveEmail (app/inbound). Wiring only, built once per cold start.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { receiveEmail } from '../../app/inbound/receive-email';
import { createInboundMailHandler } from '../../handlers/queue/inbound-mail';
import { ConfigError } from '../config';
import { loadAwsWiring } from './env';
import { emailBodies } from './plugs/bodies';
import { inboundMessages, inboundRequires } from './plugs/inbound';
import { mimeParser } from './plugs/mime';
import { eventsQueue } from './plugs/queues';
import { createAwsServices } from './services';

const SERVICE = 'sendflow-inbound';
// The events queue (email.received is relayed at once), the bodies bucket (the file store: the raw message,
// its parsed body and attachments under emails/<rcv id>/) and the time-boxed parse thread. DynamoDB is every
// function's base.
const services = createAwsServices(SERVICE, [eventsQueue, emailBodies, mimeParser]);
const wiring = loadAwsWiring(process.env);
const missing = inboundRequires(wiring).filter(([, value]) => !value);
if (missing.length) throw new ConfigError(missing.map(([name]) => `${name}: required by ${SERVICE}, not set`));

export const handler = middy(
  createInboundMailHandler({
    source: inboundMessages(wiring),
    receive: (message) => receiveEmail(services.inbound, message),
    logger: services.logger,
  }),
).use(injectLambdaContext(services.logger, { resetKeys: true }));
