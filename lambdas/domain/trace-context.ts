// W3C Trace Context (https://www.w3.org/TR/trace-context/) as Sendflow carries it: parsed from a caller's
// `traceparent`/`tracestate`, kept on stored items and queue messages in a compact form (`trace`), and written
// again as the headers of every webhook request. Pure: no SDK, so the hot path pays for none when tracing is off.

/** One span's context: what a `traceparent` (and its `tracestate`) says. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zeros. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zeros: the parent span. */
  readonly spanId: string;
  /** The trace flags byte (bit 0: sampled). */
  readonly flags: number;
  /** The vendors' `tracestate`, as received (kept only up to TRACE_STATE_MAX characters). */
  readonly state?: string;
}

/**
 * The longest `tracestate` carried. W3C allows 512 characters; every stored item and message pays for what is
 * carried, so a longer one is dropped whole (the spec lets a vendor drop entries; the trace itself goes on).
 */
export const TRACE_STATE_MAX = 128;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** What a tracestate may hold: list members of printable ASCII, no more than 32 of them. */
const TRACE_STATE = /^[\x20-\x7e]*$/;

/**
 * The context a `traceparent` header names, or undefined when it is absent or invalid (W3C: an invalid one is
 * ignored and a new trace starts). Version 00 must be exactly 55 characters; a later version may append fields,
 * which are ignored; version ff is invalid.
 */
export function parseTraceparent(header: string | undefined, state?: string): TraceParent | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  const match = TRACEPARENT.exec(value);
  if (!match) return undefined;
  const [, version, traceId = '', spanId = '', flags = '', rest] = match;
  if (version === 'ff' || (version === '00' && (value.length !== 55 || rest !== undefined))) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  const kept = keptState(state);
  return { traceId, spanId, flags: Number.parseInt(flags, 16), ...(kept ? { state: kept } : {}) };
}

function keptState(state: string | undefined): string | undefined {
  const value = state?.trim();
  if (!value || value.length > TRACE_STATE_MAX || !TRACE_STATE.test(value)) return undefined;
  if (value.split(',').length > 32) return undefined;
  return value;
}

/** The `traceparent` header of a context (version 00). */
export function formatTraceparent(context: Pick<TraceParent, 'traceId' | 'spanId' | 'flags'>): string {
  return `00-${context.traceId}-${context.spanId}-${context.flags.toString(16).padStart(2, '0')}`;
}

/** The headers that continue a context in an outgoing request: `traceparent`, and `tracestate` when there is one. */
export function traceHeaders(context: TraceParent | undefined): Record<string, string> {
  if (!context) return {};
  return { traceparent: formatTraceparent(context), ...(context.state ? { tracestate: context.state } : {}) };
}

/**
 * The compact form stored and queued (`trace`): trace id, span id and flags as 25 bytes in base64url (34
 * characters, against 55 for the header), then a space and the tracestate when there is one.
 */
export function compactTrace(context: TraceParent): string {
  const bytes = Buffer.from(`${context.traceId}${context.spanId}${context.flags.toString(16).padStart(2, '0')}`, 'hex');
  const ids = bytes.toString('base64url');
  return context.state ? `${ids} ${context.state}` : ids;
}

const COMPACT = /^[A-Za-z0-9_-]{34}$/;

/** The context a compact `trace` holds, or undefined when it is absent or malformed (a bad one starts no trace). */
export function expandTrace(compact: string | undefined): TraceParent | undefined {
  if (compact === undefined) return undefined;
  const space = compact.indexOf(' ');
  const ids = space < 0 ? compact : compact.slice(0, space);
  if (!COMPACT.test(ids)) return undefined;
  const hex = Buffer.from(ids, 'base64url').toString('hex');
  const traceId = hex.slice(0, 32);
  const spanId = hex.slice(32, 48);
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  const state = space < 0 ? undefined : keptState(compact.slice(space + 1));
  return { traceId, spanId, flags: Number.parseInt(hex.slice(48, 50), 16), ...(state ? { state } : {}) };
}

/** The longest compact `trace` a stored item or message carries: the ids, a space, the longest tracestate kept. */
export const COMPACT_TRACE_MAX = 34 + 1 + TRACE_STATE_MAX;
