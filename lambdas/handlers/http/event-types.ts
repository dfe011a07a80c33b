// HTTP handler for GET /v1/event-types: the event catalog (any valid key). Static: built once per process.
import * as z from 'zod';
import { EVENT_TYPES } from '../../domain/events';
import type { ResponseSchemas, RouteHandler } from './context';
import { eventCatalog } from './event-catalog';
import { named, reply, success } from './response';

const entrySchema = named(
  'EventTypeEntry',
  z.strictObject({
    type: z.enum(EVENT_TYPES),
    description: z.string(),
    schema: z.record(z.string(), z.unknown()).meta({
      description:
        'JSON Schema (draft 2020-12, `$schema` set) of this event’s payload exactly as a `standard` webhook ' +
        'receives it; the same schema as this document’s `webhooks` entry for the type.',
    }),
  }),
);

const responses = {
  listEventTypes: success(
    200,
    named('EventTypeList', z.strictObject({ object: z.literal('list'), data: z.array(entrySchema) })),
    'Every event type, in catalog order',
  ),
} as const;

/** The same for every key until the next deploy: a client may keep it a few minutes (never a shared cache). */
const CACHE = { 'Cache-Control': 'private, max-age=300' };

export function eventTypeHandlers() {
  const list: RouteHandler = async () =>
    reply(responses.listEventTypes, { object: 'list', data: eventCatalog() }, CACHE);
  return { listEventTypes: list };
}

export const responseSchemas: ResponseSchemas = responses;
