// Use cases of templates (/v1/templates, docs/templates.md): create (a draft), read by id or alias, list, update
// (a new draft version), publish (the draft becomes what sends render), duplicate, delete. Each change is one
// conditional write of the template's record over the revision it read; versions are written before it and never
// changed, so a crash between the two leaves at most an unreferenced version (removed with its template).
import { ConflictError, LimitExceededError, NotFoundError, ValidationError } from '../../domain/errors';
import { timeOrderedId } from '../../domain/ids';
import {
  contentProblems,
  isTemplateId,
  TEMPLATE_ID_PREFIX,
  TEMPLATE_LIMITS,
  type TemplateContent,
  type TemplateVariable,
  type VariableType,
} from '../../domain/templates/templates';
import type { Clock, RandomBytes } from '../ports';
import type { Tenant } from '../webhooks/ports';
import type { TemplatePage, TemplatePageQuery, TemplateRecord, TemplateRepository, TemplateVersion } from './ports';

export interface TemplateDeps {
  readonly templates: TemplateRepository;
  readonly clock: Clock;
  readonly random: RandomBytes;
}

export interface VariableInput {
  readonly key: string;
  readonly type: VariableType;
  readonly fallback?: string | number | null;
  readonly unescaped?: boolean;
}

export interface TemplateInput {
  readonly name: string;
  readonly alias?: string;
  readonly subject?: string;
  readonly html: string;
  readonly text?: string;
  readonly from?: string;
  readonly replyTo?: readonly string[];
  readonly variables?: readonly VariableInput[];
}

/** A partial update: an absent field stays, `null` clears an optional one. */
export interface TemplateChanges {
  readonly name?: string;
  readonly alias?: string | null;
  readonly subject?: string | null;
  readonly html?: string;
  readonly text?: string | null;
  readonly from?: string | null;
  readonly replyTo?: readonly string[] | null;
  readonly variables?: readonly VariableInput[] | null;
}

export interface TemplateWithDraft {
  readonly record: TemplateRecord;
  readonly draft: TemplateVersion;
}

/** Rounds of read-change-write before a template that keeps changing under us is a 409. */
const ROUNDS = 3;
const VERSION_PREFIX = 'tplv';

const iso = (deps: Pick<TemplateDeps, 'clock'>) => new Date(deps.clock.now()).toISOString();

export async function createTemplate(
  deps: TemplateDeps,
  tenant: Tenant,
  input: TemplateInput,
): Promise<TemplateRecord> {
  const now = iso(deps);
  const draft = newVersion(deps, { ...input, replyTo: input.replyTo ?? [] }, [], now);
  assertContent(draft);
  if ((await deps.templates.count(tenant)) >= TEMPLATE_LIMITS.perMode) {
    throw new LimitExceededError(
      `An account has at most ${TEMPLATE_LIMITS.perMode} templates per mode; delete one first.`,
    );
  }
  const record: TemplateRecord = {
    ...tenant,
    id: timeOrderedId(TEMPLATE_ID_PREFIX, deps.clock.now(), deps.random),
    name: input.name,
    ...(input.alias !== undefined ? { alias: input.alias } : {}),
    createdAt: now,
    updatedAt: now,
    rev: 1,
    draftVersionId: draft.id,
  };
  await createWithDraft(deps, record, draft);
  return record;
}

/** A copy of the template's draft as a new draft template, named "<name> (copy)", without the alias (unique). */
export async function duplicateTemplate(deps: TemplateDeps, tenant: Tenant, ref: string): Promise<TemplateRecord> {
  const { record, draft } = await getTemplate(deps, tenant, ref);
  if ((await deps.templates.count(tenant)) >= TEMPLATE_LIMITS.perMode) {
    throw new LimitExceededError(
      `An account has at most ${TEMPLATE_LIMITS.perMode} templates per mode; delete one first.`,
    );
  }
  const now = iso(deps);
  const { id: _id, createdAt: _created, ...content } = draft;
  const copy = { ...content, id: timeOrderedId(VERSION_PREFIX, deps.clock.now(), deps.random), createdAt: now };
  const name = `${record.name} (copy)`.slice(0, TEMPLATE_LIMITS.name);
  const duplicate: TemplateRecord = {
    ...tenant,
    id: timeOrderedId(TEMPLATE_ID_PREFIX, deps.clock.now(), deps.random),
    name,
    createdAt: now,
    updatedAt: now,
    rev: 1,
    draftVersionId: copy.id,
  };
  await createWithDraft(deps, duplicate, copy);
  return duplicate;
}

async function createWithDraft(deps: TemplateDeps, record: TemplateRecord, draft: TemplateVersion): Promise<void> {
  await deps.templates.putVersion(record, record.id, draft);
  if (record.alias !== undefined && !(await claimAlias(deps, record, record.alias, record.id))) {
    await deps.templates.deleteVersions(record, record.id).catch(() => {});
    throw aliasTaken(record.alias);
  }
  if (!(await deps.templates.create(record))) throw new Error(`template id ${record.id} exists`);
  // A concurrent create may have judged this claim stale before the record existed and taken it: then that one has
  // the alias, and this template is removed again (409).
  if (record.alias !== undefined && (await deps.templates.aliasOwner(record, record.alias)) !== record.id) {
    await deps.templates.delete(record, record.id);
    await deps.templates.deleteVersions(record, record.id).catch(() => {});
    throw aliasTaken(record.alias);
  }
}

/**
 * The template a reference names (its id, or its alias), with its draft: 404 when the tenant has none. A draft
 * replaced (and deleted) between the two reads is read again from the record as it is now.
 */
export async function getTemplate(
  deps: Pick<TemplateDeps, 'templates'>,
  tenant: Tenant,
  ref: string,
  options: { consistent?: boolean } = {},
): Promise<TemplateWithDraft> {
  for (let round = 0; round < ROUNDS; round++) {
    const record = await findTemplate(deps, tenant, ref, round ? { consistent: true } : options);
    if (!record) throw notFound(ref);
    const draft = await deps.templates.getVersion(tenant, record.id, record.draftVersionId);
    if (draft) return { record, draft };
  }
  throw changing(ref);
}

/** The record a reference names, or null. An alias counts only while its template still has it. */
export async function findTemplate(
  deps: Pick<TemplateDeps, 'templates'>,
  tenant: Tenant,
  ref: string,
  options: { consistent?: boolean } = {},
): Promise<TemplateRecord | null> {
  if (isTemplateId(ref)) return deps.templates.get(tenant, ref, options);
  const owner = await deps.templates.aliasOwner(tenant, ref);
  if (!owner) return null;
  const record = await deps.templates.get(tenant, owner, options);
  return record?.alias === ref ? record : null;
}

export function listTemplates(
  deps: Pick<TemplateDeps, 'templates'>,
  tenant: Tenant,
  query: TemplatePageQuery,
): Promise<TemplatePage> {
  return deps.templates.list(tenant, query);
}

/**
 * Applies `changes` to the draft: a new draft version (the published one, if any, is untouched: sends go on
 * rendering it until the next publish). A new alias is claimed first and the old one released after.
 */
export async function updateTemplate(
  deps: TemplateDeps,
  tenant: Tenant,
  ref: string,
  changes: TemplateChanges,
): Promise<TemplateRecord> {
  for (let round = 0; round < ROUNDS; round++) {
    const { record, draft } = await getTemplate(deps, tenant, ref, { consistent: true });
    const now = iso(deps);
    const content = changedContent(draft, changes);
    const contentChanged = Object.keys(changes).some((field) => field !== 'name' && field !== 'alias');
    const next = contentChanged ? newVersion(deps, content, draft.variables, now) : null;
    if (next) assertContent(next);
    const alias = changes.alias === undefined ? record.alias : (changes.alias ?? undefined);
    const newAlias = alias !== undefined && alias !== record.alias ? alias : undefined;
    if (newAlias !== undefined && !(await claimAlias(deps, tenant, newAlias, record.id))) throw aliasTaken(newAlias);
    if (next) await deps.templates.putVersion(tenant, record.id, next);
    const { alias: _old, ...rest } = record;
    const updated: TemplateRecord = {
      ...rest,
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(alias !== undefined ? { alias } : {}),
      updatedAt: now,
      rev: record.rev + 1,
      draftVersionId: next?.id ?? record.draftVersionId,
    };
    if (!(await deps.templates.replace(updated, record.rev))) {
      // Someone changed it meanwhile: nothing of this round is referenced; read again.
      if (next) await deps.templates.deleteVersion(tenant, record.id, next.id).catch(() => {});
      if (newAlias !== undefined) await deps.templates.releaseAlias(tenant, newAlias, record.id).catch(() => {});
      continue;
    }
    if (record.alias !== undefined && record.alias !== alias) {
      await deps.templates.releaseAlias(tenant, record.alias, record.id).catch(() => {});
    }
    if (next && record.draftVersionId !== record.publishedVersionId) {
      await deps.templates.deleteVersion(tenant, record.id, record.draftVersionId).catch(() => {});
    }
    return updated;
  }
  throw changing(ref);
}

/** The draft becomes the published version (what sends render); publishing an unchanged draft again is a no-op. */
export async function publishTemplate(deps: TemplateDeps, tenant: Tenant, ref: string): Promise<TemplateRecord> {
  for (let round = 0; round < ROUNDS; round++) {
    const record = await findTemplate(deps, tenant, ref, { consistent: true });
    if (!record) throw notFound(ref);
    if (record.publishedVersionId === record.draftVersionId) return record;
    const now = iso(deps);
    const published: TemplateRecord = {
      ...record,
      rev: record.rev + 1,
      publishedVersionId: record.draftVersionId,
      publishedAt: now,
      updatedAt: now,
    };
    if (!(await deps.templates.replace(published, record.rev))) continue;
    if (record.publishedVersionId !== undefined) {
      await deps.templates.deleteVersion(tenant, record.id, record.publishedVersionId).catch(() => {});
    }
    return published;
  }
  throw changing(ref);
}

/** Removes the template, its alias and its versions; sends naming it fail from then on. */
export async function deleteTemplate(deps: TemplateDeps, tenant: Tenant, ref: string): Promise<TemplateRecord> {
  const record = await findTemplate(deps, tenant, ref, { consistent: true });
  if (!record || !(await deps.templates.delete(tenant, record.id))) throw notFound(ref);
  if (record.alias !== undefined) await deps.templates.releaseAlias(tenant, record.alias, record.id).catch(() => {});
  await deps.templates.deleteVersions(tenant, record.id).catch(() => {});
  return record;
}

/**
 * What a send renders: the template's published version; a problem (a 422 of the send's `template.id`) when there
 * is none. A version replaced (and deleted) by a publish between the two reads is read again.
 */
export async function publishedVersion(
  deps: Pick<TemplateDeps, 'templates'>,
  tenant: Tenant,
  ref: string,
): Promise<{ readonly record: TemplateRecord; readonly version: TemplateVersion } | { readonly problem: string }> {
  for (let round = 0; round < ROUNDS; round++) {
    const record = await findTemplate(deps, tenant, ref, round ? { consistent: true } : {});
    if (!record) return { problem: `No template with id or alias ${JSON.stringify(ref)} in ${tenant.mode} mode.` };
    if (!record.publishedVersionId) {
      return {
        problem: `Template ${record.id} is a draft: publish it (POST /v1/templates/${record.id}/publish) first.`,
      };
    }
    const version = await deps.templates.getVersion(tenant, record.id, record.publishedVersionId);
    if (version) return { record, version };
  }
  throw changing(ref);
}

/** The alias for this template: unclaimed, already its own, or held by a claim its owner no longer backs. */
async function claimAlias(deps: TemplateDeps, tenant: Tenant, alias: string, templateId: string): Promise<boolean> {
  if (await deps.templates.claimAlias(tenant, alias, templateId)) return true;
  const owner = await deps.templates.aliasOwner(tenant, alias);
  if (owner === templateId) return true;
  if (owner === null) return deps.templates.claimAlias(tenant, alias, templateId);
  const holder = await deps.templates.get(tenant, owner, { consistent: true });
  if (holder?.alias === alias) return false;
  return deps.templates.claimAlias(tenant, alias, templateId, owner);
}

type ContentInput = Omit<TemplateContent, 'variables'> & { readonly variables?: readonly VariableInput[] };

function changedContent(draft: TemplateVersion, changes: TemplateChanges): ContentInput {
  const pick = <K extends 'subject' | 'text' | 'from'>(field: K) => {
    const change = changes[field];
    if (change === null) return {};
    const value = change ?? draft[field];
    return value === undefined ? {} : { [field]: value };
  };
  return {
    ...pick('subject'),
    ...pick('text'),
    ...pick('from'),
    html: changes.html ?? draft.html,
    replyTo: changes.replyTo === null ? [] : (changes.replyTo ?? draft.replyTo),
    variables: changes.variables === null ? [] : (changes.variables ?? draft.variables),
  };
}

/**
 * A new version of this content. A variable keeps its created_at across versions, and its updated_at while its
 * declaration is unchanged.
 */
function newVersion(
  deps: Pick<TemplateDeps, 'clock' | 'random'>,
  content: ContentInput,
  previous: readonly TemplateVariable[],
  now: string,
): TemplateVersion {
  const before = new Map(previous.map((variable) => [variable.key, variable]));
  const variables = (content.variables ?? []).map((input): TemplateVariable => {
    const declared: Omit<TemplateVariable, 'createdAt' | 'updatedAt'> = {
      key: input.key,
      type: input.type,
      ...(input.fallback !== undefined && input.fallback !== null ? { fallback: input.fallback } : {}),
      ...(input.unescaped ? { unescaped: true as const } : {}),
    };
    const old = before.get(input.key);
    const same =
      old !== undefined &&
      old.type === declared.type &&
      old.fallback === declared.fallback &&
      Boolean(old.unescaped) === Boolean(declared.unescaped);
    return { ...declared, createdAt: old?.createdAt ?? now, updatedAt: same ? old.updatedAt : now };
  });
  const { variables: _inputs, ...rest } = content;
  return {
    ...(rest.subject !== undefined ? { subject: rest.subject } : {}),
    html: rest.html,
    ...(rest.text !== undefined ? { text: rest.text } : {}),
    ...(rest.from !== undefined ? { from: rest.from } : {}),
    replyTo: [...rest.replyTo],
    variables,
    id: timeOrderedId(VERSION_PREFIX, deps.clock.now(), deps.random),
    createdAt: now,
  };
}

function assertContent(version: TemplateContent): void {
  const problems = contentProblems(version);
  if (problems.length) {
    throw new ValidationError(`The template is invalid: ${problems[0]?.path}: ${problems[0]?.message}`, {
      details: problems,
    });
  }
}

const notFound = (ref: string) => new NotFoundError(`No template with id or alias ${ref}.`);
const aliasTaken = (alias: string) =>
  new ConflictError(`Another template of this account has the alias ${alias}.`, 'alias_taken');
const changing = (ref: string) =>
  new ConflictError(`Template ${ref} is being changed by other requests; try again.`, 'conflict');
