// Use cases for webhook endpoints (spec §2.1, §3.1, §4.1; DESIGN §4): create, list, get, update, delete, and
// rotate the signing secret.

import { ConflictError, LimitExceededError, NotFoundError } from '../../domain/errors';
import { type EventType, normalizeEventName, normalizeEventNames, unknownEventTypeMessage } from '../../domain/events';
import { problem as fieldProblem, invalidRequest } from '../../domain/field-problems';
import { timeOrderedId } from '../../domain/ids';
import { WEBHOOKS_PER_MODE } from '../../domain/plans';
import { switchOf } from '../../domain/stored-formats';
import {
  type AwsDestination,
  activeDestination,
  type DestinationInput,
  destinationOf,
  destinationProblems,
  generateExternalId,
  isAwsStoredUrl,
  storedUrlOf,
} from '../../domain/webhooks/destination';
import { filterProblems, isEmptyFilter, type WebhookFilter } from '../../domain/webhooks/filter';
import { detectFormat, type WebhookFormat } from '../../domain/webhooks/format';
import type { Ordering } from '../../domain/webhooks/ordering';
import {
  MAX_PREVIOUS_SECRETS,
  replacedUntil,
  rotateSecretSet,
  secretSetOf,
  storedSecrets,
} from '../../domain/webhooks/secret-set';
import { generateSigningSecret } from '../../domain/webhooks/signature';
import { sourceProblem } from '../../domain/webhooks/transformation';
import type { AccountRepository, Clock, RandomBytes } from '../ports';
import type { Tenant, TransformRunner, UrlVerifier, Webhook, WebhookChanges, WebhookRepository } from './ports';

export interface ManageWebhookDeps {
  readonly webhooks: WebhookRepository;
  readonly urlVerifier: UrlVerifier;
  readonly clock: Clock;
  readonly random: RandomBytes;
  /**
   * Event types a stored format holds back on this stage (domain/stored-formats.ts, withheldEventTypes): refused
   * in a subscription, since the release before this one cannot read a webhook that names them.
   */
  readonly withheldEventTypes?: readonly string[];
  /** The accounts' external ids (AWS destinations); without it an AWS destination is refused. */
  readonly externalIds?: Pick<AccountRepository, 'ensureAwsExternalId'>;
  /** The principal customers' trust policies name (SF_AWS_TRUST_PRINCIPAL); absent: a placeholder to fill in. */
  readonly awsTrustPrincipal?: string;
  /** The sandbox a transformation is checked in (its syntax, its `handler`); without one none can be set. */
  readonly transforms?: TransformRunner;
}

export interface WebhookInput {
  /** Required for HTTP; never with an AWS destination. */
  readonly url?: string;
  /** Absent: HTTP to `url`. */
  readonly destination?: DestinationInput;
  readonly events: readonly string[];
  readonly format?: WebhookFormat;
  readonly description?: string;
  readonly ordering?: Ordering;
  /** Null or absent: unpaced. */
  readonly rateLimitPerSecond?: number | null;
  /** The payload filter, as given (checked here); null, `{}` or absent: none. */
  readonly filter?: unknown;
  /** The transformation's source, as given (checked here); null or absent: none. */
  readonly transformation?: unknown;
}

/**
 * Creates a webhook, at most WEBHOOKS_PER_MODE per account and mode (422 limit_exceeded past it). Checked
 * before and, against concurrent creations, after: ids are time-ordered, so every racing request sees the same
 * order, and one that finds itself past the limit removes its own webhook and answers 422.
 */
export async function createWebhook(deps: ManageWebhookDeps, tenant: Tenant, input: WebhookInput): Promise<Webhook> {
  const filter = withFilter(input.filter);
  const aws = checkedDestination(input);
  const events = validEventTypes(input.events, deps.withheldEventTypes);
  const transformation = await validTransformation(deps, input.transformation);
  if ((await deps.webhooks.list(tenant)).length >= WEBHOOKS_PER_MODE) throw webhookLimit();
  let url: string;
  let destination: AwsDestination | null = null;
  if (aws) {
    destination = destinationOf(aws, await externalIdOf(deps, tenant));
    url = storedUrlOf(destination as AwsDestination);
  } else {
    url = input.url ?? '';
    await verifyUrl(deps, url);
  }
  const now = new Date(deps.clock.now()).toISOString();
  const webhook: Webhook = {
    ...tenant,
    id: timeOrderedId('wh', deps.clock.now(), deps.random),
    url,
    ...(destination ? { destination } : {}),
    events,
    format: input.format ?? (destination ? 'standard' : detectFormat(url)),
    ...(input.description !== undefined ? { description: input.description } : {}),
    // Stored only when asked for: an item without it is `none`, as every webhook made before the option.
    ...(input.ordering !== undefined ? { ordering: input.ordering } : {}),
    ...(typeof input.rateLimitPerSecond === 'number' ? { rateLimitPerSecond: input.rateLimitPerSecond } : {}),
    ...filter,
    ...(transformation ? { transformation } : {}),
    secret: generateSigningSecret(deps.random),
    active: true,
    createdAt: now,
    updatedAt: now,
  };
  await deps.webhooks.create(webhook);
  const ids = (await deps.webhooks.list(tenant)).map((w) => w.id).sort();
  if (ids.indexOf(webhook.id) >= WEBHOOKS_PER_MODE) {
    await deps.webhooks.delete(tenant, webhook.id);
    throw webhookLimit();
  }
  return webhook;
}

/**
 * The AWS destination asked for, checked (422 naming each problem under `destination`, or `url` given with one,
 * or a chat format, which only an HTTP endpoint of Slack or Discord reads); null for HTTP.
 */
function checkedDestination(input: WebhookInput): DestinationInput | null {
  const given = input.destination;
  const problems = given
    ? destinationProblems(given).map((p) => fieldProblem(['destination', ...p.path], p.message))
    : [];
  const aws = given !== undefined && given.type !== 'http';
  if (aws && input.url !== undefined)
    problems.push(fieldProblem(['url'], 'is not given with an AWS destination: events go to its bus or queue.'));
  if (aws && input.format !== undefined && input.format !== 'standard')
    problems.push(fieldProblem(['format'], 'must be standard for an AWS destination (the event as JSON).'));
  if (aws && input.transformation !== undefined && input.transformation !== null) problems.push(transformationOnAws());
  if (problems.length) throw invalidRequest(problems);
  if (!aws && input.url === undefined) {
    throw invalidRequest(
      [fieldProblem(['url'], "is required: the endpoint's URL, as `url` (or Resend's `endpoint`).")],
      'missing_required_field',
    );
  }
  return aws ? (given as DestinationInput) : null;
}

/** Transformations reshape an HTTP request (its URL, method, headers): an AWS destination takes the event as it is. */
function transformationOnAws() {
  return fieldProblem(
    ['transformation'],
    'applies to HTTP endpoints only: an AWS destination gets the event as it is.',
  );
}

/** The account's external id: made on its first AWS destination, the same for every one after (and both modes). */
export async function externalIdOf(
  deps: Pick<ManageWebhookDeps, 'externalIds' | 'random'>,
  tenant: Tenant,
): Promise<string> {
  const stored = await deps.externalIds?.ensureAwsExternalId(tenant.accountId, generateExternalId(deps.random));
  if (!stored) throw new NotFoundError(`No account ${tenant.accountId}.`);
  return stored;
}

const webhookLimit = () =>
  new LimitExceededError(
    `An account has at most ${WEBHOOKS_PER_MODE} webhooks per mode; delete one (or subscribe it to more events) first.`,
  );

export function listWebhooks(deps: Pick<ManageWebhookDeps, 'webhooks'>, tenant: Tenant): Promise<Webhook[]> {
  return deps.webhooks.list(tenant);
}

export async function getWebhook(
  deps: Pick<ManageWebhookDeps, 'webhooks'>,
  tenant: Tenant,
  id: string,
): Promise<Webhook> {
  const webhook = await deps.webhooks.get(tenant, id);
  if (!webhook) throw new NotFoundError(`No webhook with id ${id}.`);
  return webhook;
}

/** What a resume clears: nulls, which the health store reads as "no streak" (one write, the update's own). */
const RESUMED: WebhookChanges = {
  disabledReason: null,
  disabledAt: null,
  failingSince: null,
  failedDeliveries: null,
  failingNotifiedAt: null,
};

/**
 * PUT /v1/webhooks/:id: any of url, events, active, description, ordering, rate limit (null clears it); pausing
 * is `active: false`, and a resume (`active: true`) clears what auto-disable left (RESUMED).
 */
export async function updateWebhook(
  deps: ManageWebhookDeps,
  tenant: Tenant,
  id: string,
  input: {
    url?: string;
    events?: readonly string[];
    active?: boolean;
    description?: string;
    ordering?: Ordering;
    rateLimitPerSecond?: number | null;
    /** null or `{}`: the filter is removed. */
    filter?: unknown;
    /** null: the transformation is removed. */
    transformation?: unknown;
  },
): Promise<Webhook> {
  const filter = input.filter === undefined ? undefined : validFilter(input.filter);
  const transformation = await validTransformation(deps, input.transformation);
  const current = await getWebhook(deps, tenant, id);
  if (transformation && (activeDestination(current) || isAwsStoredUrl(current.url))) {
    throw invalidRequest([transformationOnAws()]);
  }
  // An AWS webhook's `url` is its stand-in: its destination is set when it is made (a new one: a new webhook).
  // The unchanged url is accepted (a client or the dashboard sending the whole webhook back).
  if (
    input.url !== undefined &&
    input.url !== current.url &&
    (activeDestination(current) || isAwsStoredUrl(current.url))
  ) {
    throw invalidRequest([
      fieldProblem(
        ['url'],
        'cannot be set on a webhook with an AWS destination; create a webhook for an HTTP endpoint.',
      ),
    ]);
  }
  if (input.url !== undefined && input.url !== current.url) await verifyUrl(deps, input.url);
  // A format that was detected from the old URL follows the new one (a Slack hook moved to your own endpoint
  // becomes `standard`, signed); a format chosen explicitly otherwise stays.
  const redetect = input.url !== undefined && current.format === detectFormat(current.url);
  const changes: WebhookChanges = {
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(redetect && input.url !== undefined ? { format: detectFormat(input.url) } : {}),
    ...(input.events !== undefined ? { events: validEventTypes(input.events, deps.withheldEventTypes) } : {}),
    ...(input.active !== undefined ? { active: input.active } : {}),
    // A resume starts afresh: no disabled reason, and a new failure streak (auto-disable's window restarts). Only
    // a resume: `active: true` on an active webhook (a client sending the whole object) keeps its streak.
    ...(input.active === true && !current.active ? RESUMED : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.ordering !== undefined ? { ordering: input.ordering } : {}),
    ...(input.rateLimitPerSecond !== undefined ? { rateLimitPerSecond: input.rateLimitPerSecond } : {}),
    ...(filter !== undefined ? { filter } : {}),
    // Written together: the stored URL says whether there is a transformation (adapters/dynamodb/webhooks.ts).
    ...(input.url !== undefined || transformation !== undefined
      ? {
          url: input.url ?? current.url,
          transformation: transformation === undefined ? (current.transformation ?? null) : transformation,
        }
      : {}),
  };
  const updated = await deps.webhooks.update(tenant, id, changes, new Date(deps.clock.now()).toISOString());
  if (!updated) throw new NotFoundError(`No webhook with id ${id}.`);
  return updated;
}

/** Seconds the previous secret keeps signing after a rotation, by default (a day) and at most (a week). */
export const DEFAULT_GRACE_SECONDS = 86_400;
export const MAX_GRACE_SECONDS = 604_800;

/** Reads and conditional writes one rotation makes before it gives up with 409 (others kept rotating meanwhile). */
export const ROTATION_TRIES = 5;

/**
 * POST /v1/webhooks/:id/rotate-secret: a new signing secret at once; every earlier secret also signs for
 * `graceSeconds` at most (0: they all stop at once), so receivers can switch without losing a delivery.
 * A conditional write on the secret set it read (domain/webhooks/secret-set): a rotation that another one
 * overtook reads the new set and tries again, so the last one wins, every secret answered signs until its grace
 * ends or a later rotation cuts it, and a grace-0 rotation leaves no earlier secret signing. 409
 * `rotation_conflict` after ROTATION_TRIES overtaken tries (nothing of this one written).
 */
export async function rotateSecret(
  deps: ManageWebhookDeps,
  tenant: Tenant,
  id: string,
  graceSeconds: number,
): Promise<{ webhook: Webhook; previousSecretExpiresAt: string | null }> {
  for (let tries = 0; tries < ROTATION_TRIES; tries += 1) {
    const current = await deps.webhooks.get(tenant, id, { consistent: true });
    if (!current) throw new NotFoundError(`No webhook with id ${id}.`);
    const now = deps.clock.now();
    const rotation = rotateSecretSet(secretSetOf(current), generateSigningSecret(deps.random), now, graceSeconds);
    if (!rotation.ok) {
      throw new LimitExceededError(
        `At most ${MAX_PREVIOUS_SECRETS} earlier secrets sign at once; rotate with grace_period_seconds 0 (which ` +
          'revokes them all), or with a shorter grace period once some have expired.',
      );
    }
    const stored = storedSecrets(rotation.set);
    const webhook = await deps.webhooks.replaceSecrets(tenant, id, current.secret, stored, new Date(now).toISOString());
    if (webhook) return { webhook, previousSecretExpiresAt: replacedUntil(rotation.set, now) };
  }
  throw new ConflictError(
    `Other rotations of webhook ${id}'s secret kept changing it meanwhile; this one changed nothing. Try again.`,
    'rotation_conflict',
  );
}

export async function deleteWebhook(
  deps: Pick<ManageWebhookDeps, 'webhooks'>,
  tenant: Tenant,
  id: string,
): Promise<void> {
  if (!(await deps.webhooks.delete(tenant, id))) throw new NotFoundError(`No webhook with id ${id}.`);
}

/** Refuses a paused webhook for explicit sends (test, manual retry): paused webhooks get no requests. */
export function assertActive(webhook: Webhook): void {
  if (!webhook.active)
    throw new ConflictError('The webhook is paused; resume it (PUT active: true) first.', 'webhook_paused');
}

/**
 * Event names as given (legacy names too), normalized; an unknown one is a 422 naming its index, and so is one
 * this stage holds back (`withheld`: a stored format not yet on).
 */
export function validEventTypes(events: readonly string[], withheld: readonly string[] = []): EventType[] {
  const result = normalizeEventNames(events);
  if ('unknown' in result) {
    throw invalidRequest(
      result.unknown.map((name) => fieldProblem(['events', events.indexOf(name)], unknownEventTypeMessage(name))),
    );
  }
  const held = events.filter((name) => withheld.includes(normalizeEventName(name) ?? ''));
  if (held.length) {
    throw invalidRequest(
      held.map((name) =>
        fieldProblem(
          ['events', events.indexOf(name)],
          `Not sent on this deployment yet (${name}): its operator turns it on with ${switchText(name)} ` +
            '(docs/deploy-and-operate.md, "Every release can be rolled back").',
        ),
      ),
    );
  }
  return result.events;
}

/** How an operator turns a held-back event type on: its stored format's switch, or the reputation event's. */
function switchText(name: string): string {
  const format = switchOf(normalizeEventName(name) ?? name);
  return format ? `the ${format} stored format` : 'SF_REPUTATION_EVENTS (cdk.json sendflow:reputation)';
}

/**
 * A payload filter as given: null when it is none (null, `{}`), else the filter; a 422 naming every problem's
 * path under `filter` (domain/webhooks/filter.ts says what a filter may be).
 */
export function validFilter(filter: unknown): WebhookFilter | null {
  if (filter === null) return null;
  const problems = filterProblems(filter);
  if (problems.length) throw invalidRequest(problems.map((p) => fieldProblem(['filter', ...p.path], p.message)));
  return isEmptyFilter(filter as WebhookFilter) ? null : (filter as WebhookFilter);
}

/** A new webhook's filter attribute: only when it has one (an item without it has none, as every older webhook). */
function withFilter(given: unknown): { filter?: WebhookFilter } {
  if (given === undefined) return {};
  const filter = validFilter(given);
  return filter ? { filter } : {};
}

/**
 * A transformation as given: undefined when not given, null to remove it, else its source once it loads in the
 * sandbox and defines `handler` (a 422 on `transformation` with the sandbox's message otherwise).
 */
export async function validTransformation(
  deps: Pick<ManageWebhookDeps, 'transforms'>,
  given: unknown,
): Promise<string | null | undefined> {
  if (given === undefined || given === null) return given;
  const problem =
    sourceProblem(given) ??
    (deps.transforms ? await deps.transforms.check(given as string) : 'cannot be set: this runtime has no sandbox.');
  if (problem)
    throw invalidRequest([fieldProblem(['transformation'], problem.endsWith('.') ? problem : `${problem}.`)]);
  return given as string;
}

async function verifyUrl(deps: Pick<ManageWebhookDeps, 'urlVerifier'>, url: string): Promise<void> {
  const problem = await deps.urlVerifier.problem(url);
  if (problem) throw invalidRequest([fieldProblem(['url'], `${problem}.`)]);
}
