// HTTP handlers for /v1/listen-sessions (`npm run listen`): open a session, long-poll its events, end it.
import * as z from 'zod';
import {
  createListenSession,
  endListenSession,
  type ListenDeps,
  pollListenEvents,
} from '../../app/listen/listen-sessions';
import type { ListenSession } from '../../app/listen/ports';
import { EVENT_TYPES } from '../../domain/events';
import { LISTEN_CURSOR_PATTERN, LISTEN_IDLE_SECONDS, LISTEN_MAX_WAIT_SECONDS } from '../../domain/listen';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { type Body, integer, isoTime, named, reply, success } from './response';
import { validate } from './validate';
import { eventTypeSchema } from './webhooks';

const LEGACY_EVENT_NAMES = EVENT_TYPES.filter((type) => type.startsWith('email.')).map((type) => type.slice(6));

const createBody = z.strictObject({
  // Names are checked (and normalized) by the use case, which lists every unknown one, as for webhooks.
  events: z
    .array(
      z.string().meta({
        enum: [...EVENT_TYPES, ...LEGACY_EVENT_NAMES],
        description: 'An event type; a legacy unprefixed name (delivered) is taken as email.delivered.',
      }),
    )
    .min(1, 'Give at least one event, or leave events out for every type.')
    .max(50)
    .optional()
    .meta({ description: 'The event types to take; every type when absent.' }),
});

const pollQuery = z.strictObject({
  after: z
    .string()
    .regex(LISTEN_CURSOR_PATTERN, 'Pass the next_after of the previous answer.')
    .optional()
    .meta({ description: 'The next_after of the previous answer; from the oldest event kept when absent.' }),
  wait: z.coerce
    .number()
    .int()
    .min(0)
    .max(LISTEN_MAX_WAIT_SECONDS)
    .default(LISTEN_MAX_WAIT_SECONDS)
    .meta({ description: `Seconds to wait for a first event (0–${LISTEN_MAX_WAIT_SECONDS}).` }),
});

const sessionSchema = named(
  'ListenSession',
  z.strictObject({
    object: z.literal('listen_session'),
    id: z.string(),
    signing_secret: z.string().meta({
      description: 'whsec_…: the CLI signs what it forwards with it, exactly as a webhook delivery is signed.',
    }),
    events: z.array(eventTypeSchema).nullable().meta({ description: 'The event types it takes; null: every type.' }),
    idle_timeout_seconds: integer.meta({ description: 'It ends when not polled for this long.' }),
    expires_at: isoTime.meta({ description: 'When it ends unless polled again.' }),
    created_at: isoTime,
  }),
  'A listen session: the events a webhook would get, held for the CLI (`npm run listen`) to pull.',
);

const listenEventSchema = named(
  'ListenEvent',
  z.strictObject({
    id: z.string().meta({ description: 'The event id (webhook-id when forwarded).' }),
    type: eventTypeSchema,
    payload: z.string().meta({ description: 'The exact body a `standard` webhook receives, to sign and forward.' }),
  }),
);

const responses = {
  createListenSession: success(201, sessionSchema, 'The session, with its signing secret'),
  pollListenSession: success(
    200,
    named(
      'ListenEventList',
      z.strictObject({
        object: z.literal('list'),
        data: z.array(listenEventSchema),
        next_after: z
          .string()
          .nullable()
          .meta({ description: 'The `after` of the next poll (null until a first event came).' }),
        expires_at: isoTime.meta({ description: 'When the session ends unless polled again.' }),
      }),
    ),
    'The events after `after` (empty when none came within `wait`), in the order they were put on the session, at most 100',
  ),
  deleteListenSession: success(
    200,
    named(
      'ListenSessionDeleted',
      z.strictObject({ object: z.literal('listen_session'), id: z.string(), deleted: z.literal(true) }),
    ),
    'Ended',
  ),
} as const;

export function listenHandlers(deps: ListenDeps) {
  const create: RouteHandler = async ({ caller, body }) =>
    reply(
      responses.createListenSession,
      view(await createListenSession(deps, tenantOf(caller), validate(createBody, body ?? {}))),
    );
  const poll: RouteHandler = async ({ caller, params, query }) => {
    const { after, wait } = validate(pollQuery, query, 'query');
    const result = await pollListenEvents(deps, { ...tenantOf(caller), plan: caller.plan }, params.id ?? '', {
      after: after ?? null,
      waitMs: wait * 1000,
    });
    return reply(responses.pollListenSession, {
      object: 'list',
      data: result.events.map((event) => ({
        id: event.eventId,
        type: event.type as (typeof EVENT_TYPES)[number],
        payload: event.payload,
      })),
      next_after: result.next,
      expires_at: new Date(result.session.expiresAt * 1000).toISOString(),
    });
  };
  const remove: RouteHandler = async ({ caller, params }) => {
    const id = params.id ?? '';
    await endListenSession(deps, tenantOf(caller), id);
    return reply(responses.deleteListenSession, { object: 'listen_session', id, deleted: true });
  };
  return { createListenSession: create, pollListenSession: poll, deleteListenSession: remove };
}

function view(session: ListenSession): Body<typeof sessionSchema> {
  return {
    object: 'listen_session',
    id: session.id,
    signing_secret: session.secret,
    events: session.events ? [...session.events] : null,
    idle_timeout_seconds: LISTEN_IDLE_SECONDS,
    expires_at: new Date(session.expiresAt * 1000).toISOString(),
    created_at: new Date(session.createdAt).toISOString(),
  };
}

export const requestSchemas: RequestSchemas = {
  createListenSession: { body: createBody },
  pollListenSession: { query: pollQuery },
};
export const responseSchemas: ResponseSchemas = responses;
