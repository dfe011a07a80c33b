// Unit tests of the attempt error classes (lambdas/domain/webhooks/error-class.ts): the class of an answered
// attempt comes from its status alone; a recorded class always wins; entries stored before classes were
// recorded get theirs from their text (every text the attempt makers ever wrote maps to its class), and anything
// unknown is network_error, so the set stays the closed list of the API.
import { describe, expect, it } from 'vitest';
import {
  ATTEMPT_ERRORS,
  ERROR_CLASSES,
  errorClassOf,
  errorClassOfStatus,
} from '../../lambdas/domain/webhooks/error-class';

const failed = (error: string, statusCode: number | null = null) => ({ statusCode, error });

describe('errorClassOfStatus', () => {
  it('gives a 2xx no class', () => {
    expect(errorClassOfStatus(200)).toBeNull();
    expect(errorClassOfStatus(299)).toBeNull();
  });

  it.each([
    [301, 'redirect'],
    [399, 'redirect'],
    [400, 'http_4xx'],
    [429, 'http_4xx'],
    [499, 'http_4xx'],
    [500, 'http_5xx'],
    [599, 'http_5xx'],
    [101, 'network_error'],
    [199, 'network_error'],
    [600, 'network_error'],
    [999, 'network_error'],
  ])('classes HTTP %i as %s', (status, expected) => {
    expect(errorClassOfStatus(status)).toBe(expected);
  });
});

describe('errorClassOf', () => {
  it('answers the recorded class, whatever the text says', () => {
    expect(errorClassOf({ statusCode: null, error: 'connection refused', errorClass: 'tls_error' })).toBe('tls_error');
    expect(errorClassOf({ statusCode: 200, error: null, errorClass: null })).toBeNull();
  });

  it('gives a stored 2xx without error no class', () => {
    expect(errorClassOf({ statusCode: 200, error: null })).toBeNull();
  });

  it.each([
    [301, 'redirect not followed (HTTP 301 to https://elsewhere.example/)', 'redirect'],
    [404, 'HTTP 404', 'http_4xx'],
    [503, 'HTTP 503', 'http_5xx'],
    [101, 'HTTP 101', 'network_error'],
    [600, 'HTTP 600', 'network_error'],
  ])('classes a stored HTTP %i by its status', (status, error, expected) => {
    expect(errorClassOf(failed(error, status))).toBe(expected);
  });

  it.each([
    [ATTEMPT_ERRORS.timedOut(10_000), 'timeout'],
    ['Headers Timeout Error', 'timeout'],
    ['connect ETIMEDOUT 203.0.113.9:443', 'timeout'],
    [ATTEMPT_ERRORS.connectionRefused, 'connection_refused'],
    ['connect ECONNREFUSED 127.0.0.1:9', 'connection_refused'],
    [ATTEMPT_ERRORS.connectionClosed, 'network_error'],
    ['read ECONNRESET', 'network_error'],
    ['connect EHOSTUNREACH 203.0.113.9:443', 'network_error'],
    ['self-signed certificate', 'tls_error'],
    ['unable to verify the first certificate', 'tls_error'],
    ['write EPROTO 0080F3F7:error:0A00010B:SSL routines:ssl3_get_record:wrong version number', 'tls_error'],
    ["Hostname/IP does not match certificate's altnames: Host: a.example. is not in the cert's altnames", 'tls_error'],
    [ATTEMPT_ERRORS.dnsFailed('ENOTFOUND'), 'dns_error'],
    [ATTEMPT_ERRORS.dnsFailed('EAI_AGAIN'), 'dns_error'],
    ['no address for hooks.example.com', 'dns_error'],
    [ATTEMPT_ERRORS.urlRefused('must use https'), 'blocked_address'],
    [ATTEMPT_ERRORS.addressNotAllowed('evil.example', '169.254.169.254'), 'blocked_address'],
    [ATTEMPT_ERRORS.webhookPaused, 'webhook_paused'],
    [ATTEMPT_ERRORS.webhookDeleted, 'webhook_paused'],
    ['request failed', 'network_error'],
    ['something nobody foresaw', 'network_error'],
  ])('classes a stored "%s" (no response) as %s', (error, expected) => {
    expect(errorClassOf(failed(error))).toBe(expected);
  });

  it('classes a stored status before any text: a 502 whose text mentions a timeout is http_5xx', () => {
    expect(errorClassOf(failed('upstream timed out', 502))).toBe('http_5xx');
  });

  it('classes odd stored outcomes as network_error: a 2xx with an error, no status and no error', () => {
    expect(errorClassOf({ statusCode: 204, error: 'response cut' })).toBe('network_error');
    expect(errorClassOf({ statusCode: null, error: null })).toBe('network_error');
  });

  it('derives transformation_error from the text of an entry stored without its class (the rollback-safe form)', () => {
    expect(errorClassOf({ statusCode: null, error: 'transformation failed: CPU time limit exceeded (50 ms)' })).toBe(
      'transformation_error',
    );
  });

  it('only ever answers one of the closed list of classes', () => {
    expect(ERROR_CLASSES).toEqual([
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
      'transformation_error',
    ]);
    const samples = [failed('x'), failed('x', 302), failed('x', 418), failed('x', 504), failed('x', 700)];
    for (const sample of samples) expect(ERROR_CLASSES).toContain(errorClassOf(sample));
  });
});
