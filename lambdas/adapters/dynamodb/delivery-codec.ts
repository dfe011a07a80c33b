// The stored form of a delivery row, kept small because storage and PITR bill every byte for its 30 days:
// what the payload already says (a standard payload begins with its event's id and type), the default format
// and null times are left out, and the attempt log is one JSON string of positional entries instead of a list
// of maps (whose attribute names DynamoDB bills on every entry). Rows stored in the full form read the same.
import type { AttemptRecord, Delivery } from '../../app/webhooks/ports';

/** A standard payload's head: `{"id":"<event id>","type":"<event type>"` (renderPayload writes them first). */
const PAYLOAD_HEAD = /^\{"id":"([^"\\]+)","type":"([^"\\]+)"/;

/**
 * One attempt: [at, statusCode, durationMs, error, errorClass, timings, kind, requestHeaders, responseHeaders].
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
  ];
  while (wire.length > 4 && wire.at(-1) === ABSENT) wire.pop();
  return wire;
}

function decodeEntry(wire: WireEntry): Record<string, unknown> {
  const [at, statusCode, durationMs, error, errorClass, timings, kind, requestHeaders, responseHeaders] = wire;
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
  };
}

/** The row's fields as stored: everything but what is left out (keys and index attributes are the caller's). */
export function compactDelivery(delivery: Delivery): Record<string, unknown> {
  const { eventId, event, format, attemptLog, nextAttemptAt, deliveredAt, ...rest } = delivery;
  const head = PAYLOAD_HEAD.exec(delivery.payload);
  const said = format === 'standard' && head?.[1] === eventId && head?.[2] === event;
  return {
    ...rest,
    ...(said ? {} : { eventId, event }),
    ...(format === 'standard' ? {} : { format }),
    log: JSON.stringify(attemptLog.map(encodeEntry)),
    ...(nextAttemptAt === null ? {} : { nextAttemptAt }),
    ...(deliveredAt === null ? {} : { deliveredAt }),
  };
}

/** A stored item, compact or full, as the fields of a Delivery (validated by the caller's schema). */
export function expandDelivery(item: Record<string, unknown>): Record<string, unknown> {
  const { log, ...rest } = item;
  const head = typeof item.payload === 'string' ? PAYLOAD_HEAD.exec(item.payload) : null;
  return {
    ...rest,
    format: item.format ?? 'standard',
    eventId: item.eventId ?? head?.[1],
    event: item.event ?? head?.[2],
    attemptLog: typeof log === 'string' ? (JSON.parse(log) as WireEntry[]).map(decodeEntry) : item.attemptLog,
    nextAttemptAt: item.nextAttemptAt ?? null,
    deliveredAt: item.deliveredAt ?? null,
  };
}
