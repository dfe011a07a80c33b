// What a failed request means for the delivery log: Node's network and TLS errors (by their code, never by
// their message) mapped to an error class and a short text people read. OpenSSL's own messages
// ("…:error:0A00010B:SSL routines:…") never reach the log.
import { ATTEMPT_ERRORS, type ErrorClass } from '../../domain/webhooks/error-class';
import { AddressNotAllowedError } from './guarded-lookup';

export interface AttemptFailure {
  readonly errorClass: ErrorClass;
  readonly error: string;
}

type CodedError = Error & { code?: unknown; reason?: unknown; library?: unknown };

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA']);
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);
const TLS = ATTEMPT_ERRORS.tls;
/** Certificate verification codes (OpenSSL's X509_V_ERR_* names, as Node reports them) to texts. */
const CERT_TEXTS: Readonly<Record<string, string>> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: TLS.selfSigned,
  SELF_SIGNED_CERT_IN_CHAIN: TLS.selfSignedInChain,
  CERT_HAS_EXPIRED: TLS.expired,
  CERT_NOT_YET_VALID: TLS.notYetValid,
  CERT_REVOKED: TLS.revoked,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: TLS.untrusted,
  UNABLE_TO_GET_ISSUER_CERT: TLS.untrusted,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: TLS.untrusted,
  CERT_UNTRUSTED: TLS.untrusted,
  CERT_CHAIN_TOO_LONG: TLS.untrusted,
  INVALID_CA: TLS.untrusted,
  CERT_SIGNATURE_FAILURE: TLS.untrusted,
  CERT_REJECTED: TLS.untrusted,
  ERR_SSL_WRONG_VERSION_NUMBER: TLS.notTls,
  ERR_SSL_HTTP_REQUEST: TLS.notTls,
  ERR_SSL_PACKET_LENGTH_TOO_LONG: TLS.notTls,
  ERR_SSL_RECORD_LAYER_FAILURE: TLS.notTls,
  ERR_SSL_UNSUPPORTED_PROTOCOL: TLS.noCommonVersion,
  ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION: TLS.noCommonVersion,
  ERR_SSL_NO_PROTOCOLS_AVAILABLE: TLS.noCommonVersion,
  ERR_SSL_NO_SHARED_CIPHER: TLS.noCommonVersion,
  ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE: TLS.refused,
};
/** OpenSSL reasons (the `reason` field Node copies from OpenSSL) that mean plain text came back. */
const NOT_TLS_REASONS = /wrong version number|http request|packet length too long|record layer failure/i;

/**
 * The class and text of a request that failed before a complete answer: `host` is the URL's host name (for the
 * certificate-name text). The deadline is the caller's to recognise (an aborted signal); this maps the rest.
 */
export function describeFailure(caught: unknown, host: string): AttemptFailure {
  if (caught instanceof AddressNotAllowedError) return { errorClass: 'blocked_address', error: caught.message };
  let current = caught as CodedError | undefined;
  while (current?.cause instanceof Error) current = current.cause as CodedError;
  const code = typeof current?.code === 'string' ? current.code : '';
  if (current instanceof AddressNotAllowedError) return { errorClass: 'blocked_address', error: current.message };
  if (DNS_CODES.has(code)) return { errorClass: 'dns_error', error: ATTEMPT_ERRORS.dnsFailed(code) };
  if (code === 'ECONNREFUSED') return { errorClass: 'connection_refused', error: ATTEMPT_ERRORS.connectionRefused };
  if (code === 'ETIMEDOUT') return { errorClass: 'timeout', error: ATTEMPT_ERRORS.network(code) };
  if (CLOSED_CODES.has(code)) return { errorClass: 'network_error', error: ATTEMPT_ERRORS.connectionClosed };
  const tls = tlsText(code, current, host);
  if (tls !== null) return { errorClass: 'tls_error', error: tls };
  return { errorClass: 'network_error', error: ATTEMPT_ERRORS.network(code || 'unknown') };
}

function tlsText(code: string, error: CodedError | undefined, host: string): string | null {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return TLS.wrongHost(host);
  const known = CERT_TEXTS[code];
  if (known !== undefined) return known;
  const reason = typeof error?.reason === 'string' ? error.reason : '';
  const fromOpenSsl = code === 'EPROTO' || code.startsWith('ERR_SSL_') || error?.library === 'SSL routines';
  if (fromOpenSsl && NOT_TLS_REASONS.test(`${reason} ${error?.message ?? ''}`)) return TLS.notTls;
  if (fromOpenSsl || code.startsWith('ERR_TLS_') || code.startsWith('CERT_') || code.includes('_CERT')) {
    return TLS.other(code);
  }
  return null;
}
