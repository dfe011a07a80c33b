// HTTP handlers for recovery jobs (/v1/webhooks/:id/recoveries): start one (202), follow it, cancel it.
import * as z from 'zod';
import type { Recovery } from '../../app/webhooks/ports';
import { cancelRecovery, getRecovery, type RecoveryDeps, startRecovery } from '../../app/webhooks/recoveries';
import { type RequestSchemas, type RouteHandler, tenantOf } from './context';
import { json } from './response';
import { validate } from './validate';

const instant = z.iso.datetime({ offset: true });

const startBody = z.strictObject({
  since: instant,
  until: instant.optional(),
  status: z.literal('failed').optional(),
});

/** A recovery job as the API shows it: `attempted` = `succeeded` + `failed`; `total` also counts `skipped`. */
export function recoveryView(recovery: Recovery) {
  return {
    object: 'webhook_recovery',
    id: recovery.id,
    webhook_id: recovery.webhookId,
    status: recovery.status,
    since: new Date(recovery.since).toISOString(),
    until: new Date(recovery.until).toISOString(),
    delivery_status: recovery.onlyFailed ? 'failed' : null,
    total: recovery.total,
    attempted: recovery.succeeded + recovery.failed,
    succeeded: recovery.succeeded,
    failed: recovery.failed,
    skipped: recovery.skipped,
    created_at: new Date(recovery.createdAt).toISOString(),
    updated_at: new Date(recovery.updatedAt).toISOString(),
  };
}

export function recoveryHandlers(deps: RecoveryDeps) {
  const start: RouteHandler = async ({ caller, params, body }) =>
    json(
      202,
      recoveryView(await startRecovery(deps, tenantOf(caller), params.id ?? '', validate(startBody, body ?? {}))),
    );
  const get: RouteHandler = async ({ caller, params }) =>
    json(200, recoveryView(await getRecovery(deps, tenantOf(caller), params.id ?? '', params.recoveryId ?? '')));
  const cancel: RouteHandler = async ({ caller, params }) =>
    json(200, recoveryView(await cancelRecovery(deps, tenantOf(caller), params.id ?? '', params.recoveryId ?? '')));
  return { startRecovery: start, getRecovery: get, cancelRecovery: cancel };
}

export const requestSchemas: RequestSchemas = { startRecovery: { body: startBody } };
