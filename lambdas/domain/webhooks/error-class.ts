// Why an attempt failed, as one of a small fixed set of classes: the `errorClass` dimension of the
// DeliveriesFailed metric and a field of the attempt log line. Derived from the recorded outcome only.
import type { AttemptOutcome } from './delivery';

export const ERROR_CLASSES = [
  'timeout',
  'connection',
  'dns',
  'http_4xx',
  'http_5xx',
  'redirect',
  'blocked_address',
  'webhook_paused',
  'webhook_deleted',
  'other',
] as const;

export type ErrorClass = (typeof ERROR_CLASSES)[number];

/**
 * The error texts the attempt makers write (the HTTP sender and the use case for paused or deleted webhooks).
 * They are what the customer reads in the delivery log, and what errorClassOf recognizes.
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
} as const;

const TIMEOUT = /^timed out\b|timeout/i;
const DNS = /^DNS lookup failed\b|^no address for\b|\bENOTFOUND\b|\bEAI_AGAIN\b/;
const BLOCKED = /^URL |^address not allowed\b/;
const CONNECTION =
  /^connection (refused|closed)|\bECONN(RESET|REFUSED|ABORTED)\b|\bEHOSTUNREACH\b|\bENETUNREACH\b|\bEPIPE\b|socket|other side closed|TLS|certificate/i;

/** The class of a failed attempt; null for a success (a 2xx with no error). */
export function errorClassOf(outcome: Pick<AttemptOutcome, 'statusCode' | 'error'>): ErrorClass | null {
  const { statusCode, error } = outcome;
  if (statusCode !== null) {
    if (statusCode >= 200 && statusCode < 300) return error === null ? null : 'other';
    if (statusCode >= 300 && statusCode < 400) return 'redirect';
    if (statusCode >= 400 && statusCode < 500) return 'http_4xx';
    if (statusCode >= 500 && statusCode < 600) return 'http_5xx';
    return 'other';
  }
  if (error === null) return 'other';
  if (error === ATTEMPT_ERRORS.webhookPaused) return 'webhook_paused';
  if (error === ATTEMPT_ERRORS.webhookDeleted) return 'webhook_deleted';
  if (BLOCKED.test(error)) return 'blocked_address';
  if (TIMEOUT.test(error)) return 'timeout';
  if (DNS.test(error)) return 'dns';
  if (CONNECTION.test(error)) return 'connection';
  return 'other';
}
