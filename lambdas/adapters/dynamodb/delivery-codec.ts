// The stored form of a delivery row, kept small because storage and PITR bill every byte for its 30 days:
// what the payload already says (a standard payload begins with its event's id and type), the default format
// and null times are left out, and the attempt log is one JSON string of positional entries instead of a list
// of maps (whose attribute names DynamoDB bills on every entry), and the payload is deflated against a preset
// dictionary of what payloads share (a 300-byte standard payload stores in about 130). Rows stored in the full
// form, or with the payload as a string, read the same.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { AttemptRecord, Delivery } from '../../app/webhooks/ports';

/**
 * Version 1 of the payload dictionary: the keys, event types and shapes payloads repeat. A stored `payloadZ1`
 * can only be inflated with these exact bytes: never change them; a new dictionary needs a new attribute name.
 */
const PAYLOAD_DICTIONARY_V1 = Buffer.from(
  '"bounce":{"type":"","message":""},"click":{"link":"https://"},"tags":[],"reason":"","subject":"",' +
    '"from":"","to":["@example.com"],"created_at":"","email_id":"em_01m8","data":{' +
    '"domain.created","domain.updated","domain.deleted","contact.created","contact.updated","contact.deleted",' +
    '"contact.subscribed","email.scheduled","email.delivery_delayed","email.bounced","email.complained",' +
    '"email.opened","email.clicked","email.failed","email.suppressed","email.unsubscribed","email.received",' +
    '"email.sent","email.delivered","timestamp":"2026-11-26T00:00:00.000Z",{"id":"evt_01m8","type":"email.',
);

/** A standard payload's head: `{"id":"<event id>","type":"<event type>"` (renderPayload writes them first). */
const PAYLOAD_HEAD = /^\{"id":"([^"\\]+)","type":"([^"\\]+)"/;

/**
 * One attempt: [at, statusCode, durationMs, error, errorClass, timings, kind, requestHeaders, responseHeaders,
 * retryAfterSeconds, awsErrorCode, awsRequestId]. The two AWS fields came last (destinations): a release before
 * them reads the first ten positions and ignores the rest.
 * 0 marks a field the entry does not have (entries stored before classes, timings or kinds were recorded);
 * timings are null when none was measured, else [dns, connect, tls, ttfb]; trailing absent fields are cut.
 */
type WireEntry = unknown[];

const ABSENT = 0;

function encodeEntry(entry: AttemptRecord): WireEntry {
  const { timings } = entry;
  const times = timings ? [timings.dnsMs, timings.connectMs, timings.tlsMs, timings.ttfbMs] : ABSENT;
  const wire: unknown[] = [
    entry.at,
    entry.statusCode,
    entry.durationMs,
    entry.error,
    entry.errorClass === undefined ? ABSENT : entry.errorClass,
    Array.isArray(times) && times.every((t) => t === null) ? null : times,
    entry.kind ?? ABSENT,
    entry.requestHeaders ?? ABSENT,
    entry.responseHeaders ?? ABSENT,
    entry.retryAfterSeconds ?? ABSENT,
    entry.awsErrorCode ?? ABSENT,
    entry.awsRequestId ?? ABSENT,
  ];
  while (wire.length > 4 && wire.at(-1) === ABSENT) wire.pop();
  return wire;
}

function decodeEntry(wire: WireEntry): Record<string, unknown> {
  const [
    at,
    statusCode,
    durationMs,
    error,
    errorClass,
    timings,
    kind,
    requestHeaders,
    responseHeaders,
    retryAfter,
    awsErrorCode,
    awsRequestId,
  ] = wire;
  const has = (value: unknown) => value !== undefined && value !== ABSENT;
  const times = Array.isArray(timings) ? timings : [null, null, null, null];
  return {
    at,
    statusCode,
    durationMs,
    error,
    ...(has(errorClass) ? { errorClass } : {}),
    ...(has(timings) ? { timings: { dnsMs: times[0], connectMs: times[1], tlsMs: times[2], ttfbMs: times[3] } } : {}),
    ...(has(kind) ? { kind } : {}),
    ...(has(requestHeaders) ? { requestHeaders } : {}),
    ...(has(responseHeaders) ? { responseHeaders } : {}),
    ...(has(retryAfter) ? { retryAfterSeconds: retryAfter } : {}),
    ...(has(awsErrorCode) ? { awsErrorCode } : {}),
    ...(has(awsRequestId) ? { awsRequestId } : {}),
  };
}

/**
 * The row's fields as stored: everything but what is left out (keys and index attributes are the caller's). The
 * payload is deflated (`payloadZ1`) only when `deflate` (the stored format deliveryPayloadZ1) is on and it pays.
 */
export function compactDelivery(delivery: Delivery, { deflate = true } = {}): Record<string, unknown> {
  const { eventId, event, format, attemptLog, nextAttemptAt, deliveredAt, ...rest } = delivery;
  const head = PAYLOAD_HEAD.exec(delivery.payload);
  const said = format === 'standard' && head?.[1] === eventId && head?.[2] === event;
  const { payload, ...others } = rest;
  const deflated = deflate ? deflateRawSync(payload, { dictionary: PAYLOAD_DICTIONARY_V1 }) : null;
  return {
    ...others,
    ...(deflated && deflated.length < Buffer.byteLength(payload)
      ? { payloadZ1: new Uint8Array(deflated) }
      : { payload }),
    ...(said ? {} : { eventId, event }),
    ...(format === 'standard' ? {} : { format }),
    log: JSON.stringify(attemptLog.map(encodeEntry)),
    ...(nextAttemptAt === null ? {} : { nextAttemptAt }),
    ...(deliveredAt === null ? {} : { deliveredAt }),
  };
}

/** A stored item, compact or full, as the fields of a Delivery (validated by the caller's schema). */
export function expandDelivery(item: Record<string, unknown>): Record<string, unknown> {
  const { log, payloadZ1, ...rest } = item;
  const payload =
    payloadZ1 instanceof Uint8Array
      ? inflateRawSync(payloadZ1, { dictionary: PAYLOAD_DICTIONARY_V1 }).toString('utf8')
      : item.payload;
  const head = typeof payload === 'string' ? PAYLOAD_HEAD.exec(payload) : null;
  return {
    ...rest,
    payload,
    format: item.format ?? 'standard',
    eventId: item.eventId ?? head?.[1],
    event: item.event ?? head?.[2],
    attemptLog: typeof log === 'string' ? (JSON.parse(log) as WireEntry[]).map(decodeEntry) : item.attemptLog,
    nextAttemptAt: item.nextAttemptAt ?? null,
    deliveredAt: item.deliveredAt ?? null,
  };
}
