// Unit tests of describeFailure (lambdas/adapters/http/attempt-failure.ts): Node's network and TLS errors, as Node
// raises them (code, OpenSSL's library and reason, a cause chain), become an error class and a short text; no
// OpenSSL message and no raw socket message ever reaches the text.
import { describe, expect, it } from 'vitest';
import { describeFailure } from '../../lambdas/adapters/http/attempt-failure';
import { AddressNotAllowedError } from '../../lambdas/adapters/http/guarded-lookup';

const nodeError = (message: string, fields: Record<string, unknown>) => Object.assign(new Error(message), fields);
const OPENSSL_WRONG_VERSION = nodeError(
  'C0D7A1E8EE7F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:354:\n',
  { library: 'SSL routines', reason: 'wrong version number', code: 'ERR_SSL_WRONG_VERSION_NUMBER' },
);

describe('describeFailure', () => {
  it.each([
    [nodeError('self-signed certificate', { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), 'the certificate is self-signed'],
    [
      nodeError('self-signed certificate in certificate chain', { code: 'SELF_SIGNED_CERT_IN_CHAIN' }),
      'the certificate chain ends in a self-signed certificate',
    ],
    [nodeError('certificate has expired', { code: 'CERT_HAS_EXPIRED' }), 'the certificate has expired'],
    [nodeError('certificate is not yet valid', { code: 'CERT_NOT_YET_VALID' }), 'the certificate is not valid yet'],
    [
      nodeError('unable to verify the first certificate', { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }),
      'the certificate is not signed by a trusted authority (or its chain is incomplete)',
    ],
    [
      nodeError(
        "Hostname/IP does not match certificate's altnames: Host: hooks.example.com. is not in the cert's altnames: DNS:other.example",
        {
          code: 'ERR_TLS_CERT_ALTNAME_INVALID',
        },
      ),
      'the certificate is not valid for hooks.example.com',
    ],
    [OPENSSL_WRONG_VERSION, 'the endpoint does not speak TLS on this port'],
    [
      nodeError('write EPROTO 0080F3F7:error:0A00010B:SSL routines:ssl3_get_record:wrong version number', {
        code: 'EPROTO',
      }),
      'the endpoint does not speak TLS on this port',
    ],
    [
      nodeError('C0:error:0A000102:SSL routines::unsupported protocol', { code: 'ERR_SSL_UNSUPPORTED_PROTOCOL' }),
      'no TLS version or cipher in common with the endpoint',
    ],
    [
      nodeError('C0:error:0A000410:SSL routines::sslv3 alert handshake failure', {
        code: 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
        library: 'SSL routines',
      }),
      'the endpoint refused the handshake',
    ],
  ])('classes %s as tls_error with a readable text', (error, text) => {
    // Act
    const failure = describeFailure(error, 'hooks.example.com');

    // Assert
    expect(failure).toEqual({ errorClass: 'tls_error', error: `TLS handshake failed: ${text}` });
  });

  it('names the code of a TLS failure it has no text for, never OpenSSL message', () => {
    // Arrange
    const error = nodeError('C0:error:0A0000C1:SSL routines::no shared signature algorithms', {
      code: 'ERR_SSL_NO_SHARED_SIGNATURE_ALGORITHMS',
      library: 'SSL routines',
    });

    // Act
    const failure = describeFailure(error, 'hooks.example.com');

    // Assert
    expect(failure).toEqual({
      errorClass: 'tls_error',
      error: 'TLS handshake failed (ERR_SSL_NO_SHARED_SIGNATURE_ALGORITHMS)',
    });
  });

  it.each([
    ['ENOTFOUND', 'dns_error', 'DNS lookup failed (ENOTFOUND)'],
    ['EAI_AGAIN', 'dns_error', 'DNS lookup failed (EAI_AGAIN)'],
    ['ECONNREFUSED', 'connection_refused', 'connection refused'],
    ['ECONNRESET', 'network_error', 'connection closed by the endpoint'],
    ['EPIPE', 'network_error', 'connection closed by the endpoint'],
    ['ETIMEDOUT', 'timeout', 'network error (ETIMEDOUT)'],
    ['EHOSTUNREACH', 'network_error', 'network error (EHOSTUNREACH)'],
    ['ENETUNREACH', 'network_error', 'network error (ENETUNREACH)'],
  ])('classes %s as %s: "%s"', (code, errorClass, text) => {
    expect(describeFailure(nodeError(`connect ${code} 203.0.113.9:443`, { code }), 'h')).toEqual({
      errorClass,
      error: text,
    });
  });

  it('reads the innermost cause, and names an error without a code "unknown"', () => {
    const wrapped = new Error('fetch failed', { cause: nodeError('getaddrinfo ENOTFOUND x', { code: 'ENOTFOUND' }) });
    expect(describeFailure(wrapped, 'x')).toEqual({ errorClass: 'dns_error', error: 'DNS lookup failed (ENOTFOUND)' });
    expect(describeFailure(new Error('something odd: 0xdeadbeef'), 'x')).toEqual({
      errorClass: 'network_error',
      error: 'network error (unknown)',
    });
  });

  it('classes the guarded lookup refusing an address as blocked_address, with its text', () => {
    const refused = new AddressNotAllowedError('address not allowed: evil.example resolves to 10.0.0.1');
    expect(describeFailure(refused, 'evil.example')).toEqual({
      errorClass: 'blocked_address',
      error: 'address not allowed: evil.example resolves to 10.0.0.1',
    });
  });
});
