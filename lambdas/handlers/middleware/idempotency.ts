// Idempotency-Key on routes the manifest marks idempotent. A replay is handed to the route dispatcher (not
// returned early), so the rate-limit and request-id headers still stamp it.
import { type IdempotencyStore, requestFingerprint } from '../../app/idempotency';
import type { Clock } from '../../app/ports';
import { ConflictError, ValidationError } from '../../domain/errors';
import type { ApiMiddleware } from '../http/context';
import { headerValue } from './caller';

export function idempotency(deps: { idempotency: IdempotencyStore; clock: Clock }): ApiMiddleware {
  const release: NonNullable<ApiMiddleware['onError']> = async (request) => {
    const claim = request.context.sendflow?.idempotencyClaim;
    if (claim) await deps.idempotency.release(claim.key, claim.fingerprint);
  };
  return {
    before: async (request) => {
      const state = request.context.sendflow;
      const header = headerValue(request.event.headers, 'idempotency-key');
      if (!state.route?.idempotent || header === undefined || !state.principal) return;
      if (!/^[\x21-\x7e]{1,255}$/.test(header)) {
        const message = 'The `Idempotency-Key` header must be 1 to 255 printable ASCII characters, e.g. a UUID.';
        throw new ValidationError(message, {
          details: [{ path: 'Idempotency-Key', message }],
          errorName: 'invalid_idempotency_key',
        });
      }
      const key = `${state.principal.accountId}#${state.principal.mode}#${header}`;
      const fingerprint = requestFingerprint(state.route.id, state.body ?? null);
      const claim = await deps.idempotency.begin(key, fingerprint, deps.clock.now());
      if (claim.kind === 'mismatch') {
        throw new ConflictError(
          'This Idempotency-Key was already used with a different request.',
          'idempotency_key_reused',
        );
      }
      if (claim.kind === 'in_progress') {
        throw new ConflictError(
          'A request with this Idempotency-Key is still being processed.',
          'idempotency_in_progress',
        );
      }
      if (claim.kind === 'replay') state.replay = claim.response;
      else state.idempotencyClaim = { key, fingerprint };
    },
    after: async (request) => {
      const claim = request.context.sendflow.idempotencyClaim;
      const response = request.response;
      if (!claim || !response) return;
      if (response.statusCode >= 400) return release(request);
      await deps.idempotency.complete(claim.key, claim.fingerprint, {
        statusCode: response.statusCode,
        body: response.body,
      });
    },
    onError: release,
  };
}
