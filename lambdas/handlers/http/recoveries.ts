// HTTP handlers for recovery jobs (/v1/webhooks/:id/recoveries): start one (202), follow it, cancel it.
import * as z from 'zod';
import type { Recovery } from '../../app/webhooks/ports';
import {
  cancelRecovery,
  getRecovery,
  listRecoveries,
  type RecoveryDeps,
  startRecovery,
} from '../../app/webhooks/recoveries';
import { RECOVERY_STATUSES } from '../../domain/webhooks/recovery';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { type Body, integer, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const instant = z.iso.datetime({ offset: true });

const startBody = z.strictObject({
  since: instant,
  until: instant.optional(),
  status: z.literal('failed').optional(),
});

export const recoverySchema = named(
  'Recovery',
  z.strictObject({
    object: z.literal('webhook_recovery'),
    id: z.string(),
    webhook_id: z.string(),
    status: z.enum(RECOVERY_STATUSES),
    since: isoTime,
    until: isoTime,
    delivery_status: z.literal('failed').nullable().meta({ description: 'failed: only failed deliveries; null: all.' }),
    total: integer.meta({ description: 'Deliveries of the window seen so far, skipped ones included.' }),
    attempted: integer.meta({ description: 'succeeded + failed.' }),
    succeeded: integer,
    failed: integer,
    skipped: integer,
    created_at: isoTime,
    updated_at: isoTime,
  }),
  'A recovery job: one new attempt for every delivery of a window, in the background.',
);

const recoveryList = named(
  'RecoveryList',
  z.strictObject({ object: z.literal('list'), data: z.array(recoverySchema) }),
);

const responses = {
  startRecovery: success(202, recoverySchema, 'The job, started: follow it with getRecovery'),
  listRecoveries: success(200, recoveryList, "The webhook's last 20 jobs, newest first"),
  getRecovery: success(200, recoverySchema, 'The job as it stands'),
  cancelRecovery: success(200, recoverySchema, 'The job, canceled (or as it ended)'),
} as const;

/** A recovery job as the API shows it: `attempted` = `succeeded` + `failed`; `total` also counts `skipped`. */
export function recoveryView(recovery: Recovery): Body<typeof recoverySchema> {
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
    reply(
      responses.startRecovery,
      recoveryView(await startRecovery(deps, tenantOf(caller), params.id ?? '', validate(startBody, body ?? {}))),
    );
  const list: RouteHandler = async ({ caller, params }) =>
    reply(responses.listRecoveries, {
      object: 'list',
      data: (await listRecoveries(deps, tenantOf(caller), params.id ?? '')).map(recoveryView),
    });
  const get: RouteHandler = async ({ caller, params }) =>
    reply(
      responses.getRecovery,
      recoveryView(await getRecovery(deps, tenantOf(caller), params.id ?? '', params.recoveryId ?? '')),
    );
  const cancel: RouteHandler = async ({ caller, params }) =>
    reply(
      responses.cancelRecovery,
      recoveryView(await cancelRecovery(deps, tenantOf(caller), params.id ?? '', params.recoveryId ?? '')),
    );
  return { startRecovery: start, listRecoveries: list, getRecovery: get, cancelRecovery: cancel };
}

export const requestSchemas: RequestSchemas = { startRecovery: { body: startBody } };
export const responseSchemas: ResponseSchemas = responses;
