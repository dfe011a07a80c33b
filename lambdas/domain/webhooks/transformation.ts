// Webhook transformations (issue 32, Svix's "transformations"): a webhook's JavaScript `handler(webhook)` that
// reshapes one attempt's request. Pure rules: what the handler is given, its limits, and what it may return (the
// sandbox that runs it is adapters/sandbox/quickjs-sandbox.ts; the attempt path's one call app/webhooks/transform).

/** Limits of a transformation: its source, its run (CPU, memory, stack) and what it may return. */
export const TRANSFORMATION_LIMITS = {
  /** Characters of source (Svix's editor keeps functions of a few lines; this is generous for a hand-written one). */
  sourceChars: 16 * 1024,
  /** Wall time of one run, stopped by QuickJS's interrupt handler: about 50 ms of CPU in a run that never waits. */
  cpuMs: 50,
  /** Bytes the run's QuickJS runtime may allocate (runtime.setMemoryLimit). */
  memoryBytes: 16 * 1024 * 1024,
  /** Bytes of native stack the run may use (runtime.setMaxStackSize): deep recursion ends as a RangeError. */
  stackBytes: 256 * 1024,
  /** Bytes of the returned webhook as JSON; the body sent is part of it. */
  outputBytes: 256 * 1024,
  /** Headers the handler may set, and characters of each name and value. */
  headers: 20,
  headerNameChars: 100,
  headerValueChars: 1000,
} as const;

/**
 * Before a webhook's stored `url` while it has a transformation (adapters/dynamodb/webhooks.ts): a scheme no
 * release sends to, so the release before transformations fails its attempts visibly after a rollback instead of
 * sending untransformed bodies (docs/deploy-and-operate.md). Never seen outside the stored item.
 */
export const STORED_URL_PREFIX = 'sendflow-transformation+';

/** Methods a transformation may choose (Svix: POST and PUT); POST without a choice. */
export const TRANSFORM_METHODS = ['POST', 'PUT', 'PATCH'] as const;
export type TransformMethod = (typeof TRANSFORM_METHODS)[number];

/** What `handler` is given: Svix's object, with the event type, and the headers Sendflow adds (none by default). */
export interface TransformInput {
  readonly eventType: string;
  readonly payload: unknown;
  readonly url: string;
  readonly method: TransformMethod;
  readonly headers: Readonly<Record<string, string>>;
}

/** A transformation's verdict on one attempt: the request to make, or canceled by the handler. */
export type TransformedRequest =
  | {
      readonly cancel: false;
      readonly url: string;
      readonly method: TransformMethod;
      /** Headers the handler added (lower-case names), before Sendflow's own and the signature's. */
      readonly headers: Readonly<Record<string, string>>;
      /** The exact body to send and sign: the returned payload as JSON. */
      readonly body: string;
    }
  | { readonly cancel: true };

/** Why a run produced nothing to send: the text a delivery log shows (error class `transformation_error`). */
export class TransformationError extends Error {
  override readonly name = 'TransformationError';
}

/**
 * Header names the handler may not set: the signatures (Standard Webhooks' and Svix's, any `svix-` or `webhook-`
 * header, which a receiver may read as ours), hop-by-hop headers (RFC 9110 §7.6.1) and those the request itself
 * decides (length, host, content type, user agent).
 */
const RESERVED_HEADER = /^(?:webhook-|svix-|x-sendflow-)/;
const RESERVED_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'content-type',
  'host',
  'user-agent',
  'expect',
]);
/** An HTTP token (RFC 9110 §5.1); values: visible characters, spaces and tabs, no CR or LF. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function reservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_HEADERS.has(lower) || RESERVED_HEADER.test(lower);
}

/** A source's problem before it is run (size, shape), or null; the sandbox checks its syntax and its `handler`. */
export function sourceProblem(source: unknown): string | null {
  if (typeof source !== 'string') return 'must be a string of JavaScript defining function handler(webhook).';
  if (source.trim() === '') return 'must not be empty (null removes the transformation).';
  if (source.length > TRANSFORMATION_LIMITS.sourceChars)
    return `must be at most ${TRANSFORMATION_LIMITS.sourceChars} characters; this one has ${source.length}.`;
  return null;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What the handler returned (parsed from its JSON), checked: a cancel, or the request to make. Throws a
 * TransformationError naming the first problem. The URL's scheme and host rules and the SSRF guard are the
 * sender's, as for the webhook's own URL (adapters/http/webhook-sender.ts); here it must be an absolute URL.
 */
export function checkOutput(output: unknown, outputBytes: number): TransformedRequest {
  if (outputBytes > TRANSFORMATION_LIMITS.outputBytes)
    throw new TransformationError(
      `output too large: ${outputBytes} bytes of JSON, at most ${TRANSFORMATION_LIMITS.outputBytes}`,
    );
  if (!isRecord(output)) throw new TransformationError('handler must return the webhook object it was given');
  if (output.cancel === true) return { cancel: true };
  if (output.cancel !== undefined && output.cancel !== false)
    throw new TransformationError('cancel must be true or false');
  const { url, method = 'POST', headers = {}, payload } = output;
  if (typeof url !== 'string' || !URL.canParse(url)) throw new TransformationError('url must be an absolute URL');
  if (!/^https?:$/.test(new URL(url).protocol)) throw new TransformationError('url must use http or https');
  if (typeof method !== 'string' || !(TRANSFORM_METHODS as readonly string[]).includes(method.toUpperCase()))
    throw new TransformationError(`method must be one of ${TRANSFORM_METHODS.join(', ')}`);
  if (payload === undefined) throw new TransformationError('payload must be set (any JSON value)');
  return {
    cancel: false,
    url,
    method: method.toUpperCase() as TransformMethod,
    headers: checkHeaders(headers),
    body: JSON.stringify(payload),
  };
}

function checkHeaders(headers: unknown): Record<string, string> {
  if (!isRecord(headers)) throw new TransformationError('headers must be an object of names to strings');
  const entries = Object.entries(headers);
  const limits = TRANSFORMATION_LIMITS;
  if (entries.length > limits.headers) throw new TransformationError(`at most ${limits.headers} headers`);
  const kept: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!TOKEN.test(name) || name.length > limits.headerNameChars)
      throw new TransformationError(`header name ${JSON.stringify(name.slice(0, 100))} is not a valid header name`);
    if (reservedHeader(name))
      throw new TransformationError(`header ${name} may not be set by a transformation (signature or hop-by-hop)`);
    if (typeof value !== 'string' || !FIELD_VALUE.test(value) || value.length > limits.headerValueChars)
      throw new TransformationError(
        `header ${name} must be a string of at most ${limits.headerValueChars} characters, without line breaks`,
      );
    kept[name.toLowerCase()] = value;
  }
  return kept;
}
