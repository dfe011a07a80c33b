// HTTP handlers for /v1/suppressions, as Resend's SDK calls them (docs/resend.md, "Webhooks, suppressions and
// logs"): list (by address, `?origin=`), get and remove by id or address, add, and batches of up to 100 to add or
// remove. An id is `sup_…`.
import * as z from 'zod';
import {
  addressOf,
  addSuppressions,
  getSuppression,
  listSuppressions,
  removeSuppressions,
  SUPPRESSION_BATCH_LIMIT,
  type SuppressionDeps,
} from '../../app/suppressions/suppressions';
import { isEmailAddress } from '../../domain/email/email';
import { NotFoundError } from '../../domain/errors';
import { invalidRequest, problem } from '../../domain/field-problems';
import { SUPPRESSION_ORIGINS, SUPPRESSION_REASONS, suppressionData, suppressionId } from '../../domain/suppressions';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { isoTime, named, pageSchema, reply, success } from './response';
import { validate } from './validate';

const address = z
  .string()
  .trim()
  .max(254)
  .refine((e) => isEmailAddress(e) && !e.includes('<'), 'Must be an email address, e.g. ada@example.com.')
  .transform((e) => e.toLowerCase());

const idOrAddress = z
  .string()
  .max(400)
  .refine((value) => addressOf(value) !== null, 'Must be a suppression id (sup_…) or an email address.');

const entryFields = {
  id: z.string().meta({ description: '`sup_…`: the address, encoded (the same in every call).' }),
  email: z.string().meta({ description: 'The suppressed address, lower-cased.' }),
  origin: z
    .enum(SUPPRESSION_ORIGINS)
    .meta({ description: "Resend's origin: `bounce`, `complaint`, or `manual` (added by hand, or unsubscribed)." }),
  reason: z.enum(SUPPRESSION_REASONS).meta({
    description: "Sendflow's reason: `hard_bounce`, `complaint`, `unsubscribe` (one-click) or `manual` (the API).",
  }),
  source_id: z
    .string()
    .nullable()
    .meta({ description: 'The email that caused it (a bounce, complaint or unsubscribe); null when added by hand.' }),
  created_at: isoTime,
};

const suppressionSchema = named('Suppression', z.strictObject({ object: z.literal('suppression'), ...entryFields }));
const entrySchema = named('SuppressionListEntry', z.strictObject(entryFields));

const addedSchema = named(
  'SuppressionAdded',
  z.strictObject({
    object: z.literal('suppression'),
    id: z.string(),
    email: z.string(),
    added: z.boolean().meta({ description: 'False when the address was already suppressed (its reason stays).' }),
  }),
);
const removedSchema = named(
  'SuppressionRemoved',
  z.strictObject({
    object: z.literal('suppression'),
    id: z.string(),
    email: z.string(),
    deleted: z.boolean().meta({ description: 'False (in a batch) when the address was not suppressed.' }),
  }),
);

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: idOrAddress.optional().meta({ description: 'A suppression id or address: the page continues after it.' }),
  origin: z.enum(SUPPRESSION_ORIGINS).optional(),
});

const addBody = z.strictObject({ email: address });
const batchAddBody = z.strictObject({
  emails: z.array(address).min(1).max(SUPPRESSION_BATCH_LIMIT),
});
const batchRemoveBody = z
  .strictObject({
    emails: z.array(address).min(1).max(SUPPRESSION_BATCH_LIMIT).optional(),
    ids: z.array(idOrAddress).min(1).max(SUPPRESSION_BATCH_LIMIT).optional(),
  })
  .refine((body) => (body.emails === undefined) !== (body.ids === undefined), 'Give either `emails` or `ids`.');

const responses = {
  listSuppressions: success(
    200,
    pageSchema('SuppressionList', entrySchema, 'rows examined'),
    'A page of suppressions in address order',
  ),
  getSuppression: success(200, suppressionSchema, 'The suppression'),
  // 201 as Resend's document has it, also when the address was already suppressed (`added: false`).
  addSuppression: success(201, addedSchema, 'The address is suppressed'),
  removeSuppression: success(200, removedSchema, 'The suppression is removed'),
  batchAddSuppressions: success(
    201,
    named('SuppressionBatchAdded', z.strictObject({ data: z.array(addedSchema) })),
    'Every address, in the order given',
  ),
  batchRemoveSuppressions: success(
    200,
    named('SuppressionBatchRemoved', z.strictObject({ data: z.array(removedSchema) })),
    'Every address, in the order given',
  ),
} as const;

/** A path segment as API Gateway may hand it over (still percent-encoded: `ada%40example.com`). */
function pathValue(value: string | undefined): string {
  const raw = value ?? '';
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export function suppressionHandlers(deps: SuppressionDeps) {
  const list: RouteHandler = async ({ caller, query }) => {
    const { limit, after, origin } = validate(listQuery, query, 'query');
    const page = await listSuppressions(deps, tenantOf(caller), {
      limit,
      ...(after !== undefined ? { after: addressOf(after) as string } : {}),
      ...(origin ? { origin } : {}),
    });
    return reply(responses.listSuppressions, {
      object: 'list',
      has_more: page.hasMore,
      next_after: page.nextAfter === null ? null : suppressionId(page.nextAfter),
      data: page.items.map(suppressionData),
    });
  };
  const get: RouteHandler = async ({ caller, params }) => {
    const found = await getSuppression(deps, tenantOf(caller), pathValue(params.idOrEmail));
    return reply(responses.getSuppression, { object: 'suppression', ...suppressionData(found) });
  };
  const add: RouteHandler = async ({ caller, body }) => {
    const { email } = validate(addBody, body ?? {});
    const [result] = await addSuppressions(deps, tenantOf(caller), [email]);
    return reply(responses.addSuppression, added(email, result?.added ?? false));
  };
  const remove: RouteHandler = async ({ caller, params }) => {
    const given = pathValue(params.idOrEmail);
    const address = addressOf(given);
    const [result] = address ? await removeSuppressions(deps, tenantOf(caller), [address]) : [];
    if (!address || !result?.removed) throw new NotFoundError(`No suppression ${JSON.stringify(given.slice(0, 300))}.`);
    return reply(responses.removeSuppression, removed(address, true));
  };
  const batchAdd: RouteHandler = async ({ caller, body }) => {
    const { emails } = validate(batchAddBody, body ?? {});
    const results = await addSuppressions(deps, tenantOf(caller), emails);
    return reply(responses.batchAddSuppressions, { data: results.map((r) => added(r.address, r.added)) });
  };
  const batchRemove: RouteHandler = async ({ caller, body }) => {
    const { emails, ids } = validate(batchRemoveBody, body ?? {});
    const addresses = emails ?? (ids ?? []).map((id) => addressOf(id) as string);
    if (addresses.length === 0) throw invalidRequest([problem([], 'Give `emails` or `ids`: at least one address.')]);
    const results = await removeSuppressions(deps, tenantOf(caller), addresses);
    return reply(responses.batchRemoveSuppressions, { data: results.map((r) => removed(r.address, r.removed)) });
  };
  return {
    listSuppressions: list,
    getSuppression: get,
    addSuppression: add,
    removeSuppression: remove,
    batchAddSuppressions: batchAdd,
    batchRemoveSuppressions: batchRemove,
  };
}

const added = (email: string, isNew: boolean) => ({
  object: 'suppression' as const,
  id: suppressionId(email),
  email,
  added: isNew,
});

const removed = (email: string, deleted: boolean) => ({
  object: 'suppression' as const,
  id: suppressionId(email),
  email,
  deleted,
});

export const requestSchemas: RequestSchemas = {
  listSuppressions: { query: listQuery },
  addSuppression: { body: addBody },
  batchAddSuppressions: { body: batchAddBody },
  batchRemoveSuppressions: { body: batchRemoveBody },
};
export const responseSchemas: ResponseSchemas = responses;
