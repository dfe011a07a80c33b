// HTTP handlers for /v1/templates (docs/templates.md): the bodies and answers Resend's SDK sends and reads
// (`templates.create/get/list/update/remove/publish/duplicate`), plus Sendflow's `unescaped` on a variable.
import * as z from 'zod';
import type { TemplateRecord, TemplateVersion } from '../../app/templates/ports';
import {
  createTemplate,
  deleteTemplate,
  duplicateTemplate,
  getTemplate,
  listTemplates,
  publishTemplate,
  type TemplateChanges,
  type TemplateDeps,
  type TemplateInput,
  updateTemplate,
  type VariableInput,
} from '../../app/templates/templates';
import { EMAIL_LIMITS, unsafeTextProblem } from '../../domain/email/limits';
import { ValidationError } from '../../domain/errors';
import { ALIAS_PATTERN, isTemplateId, TEMPLATE_LIMITS, VARIABLE_TYPES } from '../../domain/templates/templates';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { address, addresses, rule } from './emails';
import { type Body, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const name = z.string().trim().min(1, 'name is required.').max(TEMPLATE_LIMITS.name);
const alias = z
  .string()
  .regex(
    ALIAS_PATTERN,
    `An alias is 1 to ${TEMPLATE_LIMITS.alias} letters, digits, ".", "_" or "-", starting with a letter or digit.`,
  )
  .refine((value) => !isTemplateId(value), 'An alias cannot start with "tpl_" (that is how ids start).');
const subject = z.string().min(1).max(EMAIL_LIMITS.subject).superRefine(rule(unsafeTextProblem));
const variable = z
  .strictObject({
    key: z.string(),
    type: z.enum(VARIABLE_TYPES, { error: 'type is "string" or "number".' }),
    fallback_value: z.union([z.string(), z.number()]).nullable().optional(),
    unescaped: z.boolean().optional().meta({
      description:
        "Sendflow's extension: a string variable put into `html` as given (markup you trust), never HTML-escaped.",
    }),
  })
  .transform(
    (v): VariableInput => ({
      key: v.key,
      type: v.type,
      ...(v.fallback_value !== undefined ? { fallback: v.fallback_value } : {}),
      ...(v.unescaped ? { unescaped: true } : {}),
    }),
  );
const variables = z.array(variable).max(TEMPLATE_LIMITS.variables, `At most ${TEMPLATE_LIMITS.variables} variables.`);

const createBody = z
  .strictObject({
    name,
    alias: alias.nullable().optional(),
    subject: subject.nullable().optional(),
    html: z.string({ error: 'html is required: the template’s HTML, with {{{VARIABLES}}}.' }).min(1),
    text: z.string().nullable().optional(),
    from: address.nullable().optional(),
    reply_to: addresses(EMAIL_LIMITS.replyTo).nullable().optional(),
    variables: variables.nullable().optional(),
  })
  .transform(
    (b): TemplateInput => ({
      name: b.name,
      html: b.html,
      ...(b.alias != null ? { alias: b.alias } : {}),
      ...(b.subject != null ? { subject: b.subject } : {}),
      ...(b.text != null ? { text: b.text } : {}),
      ...(b.from != null ? { from: b.from } : {}),
      ...(b.reply_to != null ? { replyTo: b.reply_to } : {}),
      ...(b.variables != null ? { variables: b.variables } : {}),
    }),
  );

const updateBody = z
  .strictObject({
    name: name.optional(),
    alias: alias.nullable().optional(),
    subject: subject.nullable().optional(),
    html: z.string().min(1).optional(),
    text: z.string().nullable().optional(),
    from: address.nullable().optional(),
    reply_to: addresses(EMAIL_LIMITS.replyTo).nullable().optional(),
    variables: variables.nullable().optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), 'Give at least one field to change.')
  .transform((b): TemplateChanges => {
    const changes: Record<string, unknown> = {};
    const fields = {
      name: 'name',
      alias: 'alias',
      subject: 'subject',
      html: 'html',
      text: 'text',
      from: 'from',
    } as const;
    for (const [wire, field] of Object.entries(fields)) {
      const value = b[wire as keyof typeof fields];
      if (value !== undefined) changes[field] = value;
    }
    if (b.reply_to !== undefined) changes.replyTo = b.reply_to;
    if (b.variables !== undefined) changes.variables = b.variables;
    return changes as TemplateChanges;
  });

const templateId = z
  .string()
  .regex(/^tpl_[0-9a-z]{10,60}$/, 'must be a template id')
  .optional();
const listQuery = z
  .strictObject({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    after: templateId,
    before: templateId,
  })
  .refine((q) => q.after === undefined || q.before === undefined, 'Give after or before, not both.');

const variableSchema = named(
  'TemplateVariable',
  z.strictObject({
    key: z.string(),
    type: z.enum(VARIABLE_TYPES),
    fallback_value: z.union([z.string(), z.number()]).nullable(),
    unescaped: z.boolean().meta({ description: 'Put into `html` as given, never HTML-escaped (string variables).' }),
    created_at: isoTime,
    updated_at: isoTime,
  }),
);

const templateRef = named(
  'TemplateRef',
  z.strictObject({ object: z.literal('template'), id: z.string() }),
  'The template acted on',
);

const templateSchema = named(
  'Template',
  z.strictObject({
    object: z.literal('template'),
    id: z.string(),
    current_version_id: z.string().meta({ description: "The draft's version: what an update changes." }),
    name: z.string(),
    alias: z.string().nullable(),
    from: z.string().nullable(),
    subject: z.string().nullable(),
    reply_to: z.array(z.string()).nullable(),
    html: z.string(),
    text: z.string().nullable(),
    variables: z.array(variableSchema),
    created_at: isoTime,
    updated_at: isoTime,
    status: z.enum(['draft', 'published']).meta({ description: 'published once it has a published version.' }),
    published_at: isoTime.nullable(),
    has_unpublished_versions: z
      .boolean()
      .meta({ description: 'The draft differs from the published version (sends render the published one).' }),
  }),
  'A template: its draft (what an update edits) and its publication state',
);

const listItemSchema = named(
  'TemplateListItem',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    alias: z.string().nullable(),
    status: z.enum(['draft', 'published']),
    published_at: isoTime.nullable(),
    created_at: isoTime,
    updated_at: isoTime,
  }),
);

const responses = {
  createTemplate: success(201, templateRef, 'Created, as a draft'),
  listTemplates: success(
    200,
    named(
      'TemplateList',
      z.strictObject({ object: z.literal('list'), has_more: z.boolean(), data: z.array(listItemSchema) }),
    ),
    'A page of templates, newest first',
  ),
  getTemplate: success(200, templateSchema, 'The template with its draft'),
  updateTemplate: success(200, templateRef, 'Updated: a new draft version'),
  deleteTemplate: success(
    200,
    named(
      'TemplateDeleted',
      z.strictObject({ object: z.literal('template'), id: z.string(), deleted: z.literal(true) }),
    ),
    'Deleted',
  ),
  publishTemplate: success(200, templateRef, 'Published: sends by this template render this version'),
  duplicateTemplate: success(200, templateRef, 'The copy, a new draft template'),
} as const;

const status = (record: TemplateRecord): 'draft' | 'published' => (record.publishedVersionId ? 'published' : 'draft');

export function templateView(record: TemplateRecord, draft: TemplateVersion): Body<typeof templateSchema> {
  return {
    object: 'template',
    id: record.id,
    current_version_id: record.draftVersionId,
    name: record.name,
    alias: record.alias ?? null,
    from: draft.from ?? null,
    subject: draft.subject ?? null,
    reply_to: draft.replyTo.length ? draft.replyTo : null,
    html: draft.html,
    text: draft.text ?? null,
    variables: draft.variables.map((v) => ({
      key: v.key,
      type: v.type,
      fallback_value: v.fallback ?? null,
      unescaped: v.unescaped === true,
      created_at: v.createdAt,
      updated_at: v.updatedAt,
    })),
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    status: status(record),
    published_at: record.publishedAt ?? null,
    has_unpublished_versions:
      record.publishedVersionId !== undefined && record.publishedVersionId !== record.draftVersionId,
  };
}

function listItemView(record: TemplateRecord): Body<typeof listItemSchema> {
  return {
    id: record.id,
    name: record.name,
    alias: record.alias ?? null,
    status: status(record),
    published_at: record.publishedAt ?? null,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

/** The path's template reference: an id or an alias; anything else names no template (404 from the use case). */
const refOf = (params: Readonly<Record<string, string>>) => {
  const ref = params.id ?? '';
  if (ref.length > 200) throw new ValidationError('The template id or alias is too long.');
  return ref;
};

export function templateHandlers(deps: TemplateDeps) {
  const create: RouteHandler = async ({ caller, body }) => {
    const record = await createTemplate(deps, tenantOf(caller), validate(createBody, body ?? {}));
    return reply(responses.createTemplate, { object: 'template', id: record.id });
  };
  const list: RouteHandler = async ({ caller, query }) => {
    const { limit, after, before } = validate(listQuery, query, 'query');
    const page = await listTemplates(deps, tenantOf(caller), {
      limit,
      ...(after !== undefined ? { after } : {}),
      ...(before !== undefined ? { before } : {}),
    });
    return reply(responses.listTemplates, {
      object: 'list',
      has_more: page.hasMore,
      data: page.items.map(listItemView),
    });
  };
  const get: RouteHandler = async ({ caller, params }) => {
    const { record, draft } = await getTemplate(deps, tenantOf(caller), refOf(params));
    return reply(responses.getTemplate, templateView(record, draft));
  };
  const update: RouteHandler = async ({ caller, params, body }) => {
    const changes = validate(updateBody, body ?? {});
    const record = await updateTemplate(deps, tenantOf(caller), refOf(params), changes);
    return reply(responses.updateTemplate, { object: 'template', id: record.id });
  };
  const remove: RouteHandler = async ({ caller, params }) => {
    const record = await deleteTemplate(deps, tenantOf(caller), refOf(params));
    return reply(responses.deleteTemplate, { object: 'template', id: record.id, deleted: true });
  };
  const publish: RouteHandler = async ({ caller, params }) => {
    const record = await publishTemplate(deps, tenantOf(caller), refOf(params));
    return reply(responses.publishTemplate, { object: 'template', id: record.id });
  };
  const duplicate: RouteHandler = async ({ caller, params }) => {
    const record = await duplicateTemplate(deps, tenantOf(caller), refOf(params));
    return reply(responses.duplicateTemplate, { object: 'template', id: record.id });
  };
  return {
    createTemplate: create,
    listTemplates: list,
    getTemplate: get,
    updateTemplate: update,
    deleteTemplate: remove,
    publishTemplate: publish,
    duplicateTemplate: duplicate,
  };
}

export const requestSchemas: RequestSchemas = {
  createTemplate: { body: createBody },
  updateTemplate: { body: updateBody },
  listTemplates: { query: listQuery },
};
export const responseSchemas: ResponseSchemas = responses;
