// Why an attempt failed, as one of a small fixed set of classes: `error_class` in the delivery log, the
// `errorClass` dimension of the DeliveriesFailed metric and a field of the attempt log line. The attempt makers
// decide the class (the sender from the error code or the status, the use case for paused or deleted webhooks);
// errorClassOf derives it from the text only for log entries stored before the class was recorded.
import type { AttemptOutcome } from './delivery';

export const ERROR_CLASSES = [
  'timeout',
  'connection_refused',
  'dns_error',
  'tls_error',
  'redirect',
  'http_4xx',
  'http_5xx',
  'blocked_address',
  'webhook_paused',
  'network_error',
  // The webhook's transformation (domain/webhooks/transformation.ts) threw, hit a limit or returned a request it
  // may not make: no request was sent. Stored without the class (its text says it) for the release before it.
  'transformation_error',
] as const;

export type ErrorClass = (typeof ERROR_CLASSES)[number];

/**
 * The error texts the attempt makers write (the HTTP sender and the use case for paused or deleted webhooks).
 * They are what the customer reads in the delivery log: short, human, never a raw OpenSSL or socket message.
 */
export const ATTEMPT_ERRORS = {
  webhookPaused: 'webhook paused',
  webhookDeleted: 'webhook deleted',
  connectionRefused: 'connection refused',
  connectionClosed: 'connection closed by the endpoint',
  timedOut: (ms: number) => `timed out after ${ms} ms`,
  dnsFailed: (code: string) => `DNS lookup failed (${code})`,
  /** The URL failed the address guard before any connection (scheme, credentials, private literal). */
  urlRefused: (reason: string) => `URL ${reason}`,
  /** The guarded lookup refused what the host resolved to. */
  addressNotAllowed: (host: string, address: string) => `address not allowed: ${host} resolves to ${address}`,
  httpStatus: (status: number) => `HTTP ${status}`,
  redirectNotFollowed: (status: number, location: string | null) =>
    `redirect not followed (HTTP ${status}${location ? ` to ${location}` : ''})`,
  tls: {
    selfSigned: 'TLS handshake failed: the certificate is self-signed',
    selfSignedInChain: 'TLS handshake failed: the certificate chain ends in a self-signed certificate',
    expired: 'TLS handshake failed: the certificate has expired',
    notYetValid: 'TLS handshake failed: the certificate is not valid yet',
    revoked: 'TLS handshake failed: the certificate has been revoked',
    wrongHost: (host: string) => `TLS handshake failed: the certificate is not valid for ${host}`,
    untrusted:
      'TLS handshake failed: the certificate is not signed by a trusted authority (or its chain is incomplete)',
    notTls: 'TLS handshake failed: the endpoint does not speak TLS on this port',
    noCommonVersion: 'TLS handshake failed: no TLS version or cipher in common with the endpoint',
    refused: 'TLS handshake failed: the endpoint refused the handshake',
    other: (code: string) => `TLS handshake failed (${code})`,
  },
  /** The transformation failed: what it threw, the limit it hit, or what is wrong with what it returned. */
  transformation: (message: string) => `${TRANSFORMATION_ERROR_PREFIX}${message}`,
  /** Any other network failure, by its code (e.g. EHOSTUNREACH). */
  network: (code: string) => `network error (${code})`,
} as const;

/** How a transformation's failure text begins: what names its class in a stored entry without one. */
export const TRANSFORMATION_ERROR_PREFIX = 'transformation failed: ';

export const isTransformationError = (error: string | null): boolean =>
  error?.startsWith(TRANSFORMATION_ERROR_PREFIX) === true;

/**
 * The class of an answered attempt, from its status alone: null for a 2xx, then redirect, http_4xx, http_5xx.
 * A status outside 200-599 (a final 1xx, 600 and above) is not an answer a webhook can give: network_error.
 */
export function errorClassOfStatus(statusCode: number): ErrorClass | null {
  if (statusCode >= 200 && statusCode < 300) return null;
  if (statusCode >= 300 && statusCode < 400) return 'redirect';
  if (statusCode >= 400 && statusCode < 500) return 'http_4xx';
  if (statusCode >= 500 && statusCode < 600) return 'http_5xx';
  return 'network_error';
}

// Texts of entries stored before the class was recorded (what the sender wrote then, Node's raw messages too).
const TIMEOUT = /^timed out\b|timeout|\bETIMEDOUT\b/i;
const DNS = /^DNS lookup failed\b|^no address for\b|\bENOTFOUND\b|\bEAI_AGAIN\b/;
const BLOCKED = /^URL |^address not allowed\b/;
const REFUSED = /^connection refused\b|\bECONNREFUSED\b/;
const TLS = /TLS|SSL|certificate|\bEPROTO\b|\bCERT_|SELF_SIGNED/i;

/**
 * The class of an attempt log entry; null for a success. The recorded class when there is one; for entries
 * stored before classes were recorded, derived from the status, else from the error text (unknown: network_error).
 */
export function errorClassOf(
  entry: Pick<AttemptOutcome, 'statusCode' | 'error'> & { readonly errorClass?: ErrorClass | null },
): ErrorClass | null {
  if (entry.errorClass !== undefined) return entry.errorClass;
  const { statusCode, error } = entry;
  if (statusCode !== null) {
    const byStatus = errorClassOfStatus(statusCode);
    return byStatus === null && error !== null ? 'network_error' : byStatus;
  }
  if (error === null) return 'network_error';
  if (error === ATTEMPT_ERRORS.webhookPaused || error === ATTEMPT_ERRORS.webhookDeleted) return 'webhook_paused';
  if (isTransformationError(error)) return 'transformation_error';
  if (BLOCKED.test(error)) return 'blocked_address';
  if (TIMEOUT.test(error)) return 'timeout';
  if (DNS.test(error)) return 'dns_error';
  if (REFUSED.test(error)) return 'connection_refused';
  if (TLS.test(error)) return 'tls_error';
  return 'network_error';
}
