// Sends by template at the HTTP edge (POST /v1/emails and /v1/emails/batch, docs/templates.md "Send with a
// template"): an email with `template: {id, variables}` instead of `html`/`text` is rendered from the template's
// published version, and the result (the request's own from, subject and reply_to first, then the template's) is
// validated as any email is. The wire form in, the wire form out: the email schema stays the one judge.
import * as z from 'zod';
import type { TemplateRepository } from '../../app/templates/ports';
import { renderTemplatedEmails, type TemplateUse } from '../../app/templates/render-emails';
import type { Tenant } from '../../app/webhooks/ports';
import { MAX_SEND_BODY_BYTES } from '../../domain/body-ceiling';
import { ValidationError } from '../../domain/errors';
import { TEMPLATE_LIMITS } from '../../domain/templates/templates';
import { validate } from './validate';

/** `template` of an email: a template's id or alias, and the values of its variables. */
export const templateField = z
  .strictObject({
    id: z.string({ error: 'template.id is the id or the alias of a published template.' }).min(1).max(200),
    variables: z
      .record(z.string(), z.unknown())
      .refine((v) => Object.keys(v).length <= TEMPLATE_LIMITS.variables, {
        message: `At most ${TEMPLATE_LIMITS.variables} variables.`,
      })
      .optional()
      .meta({
        type: 'object',
        additionalProperties: { oneOf: [{ type: 'string' }, { type: 'number' }] },
        description: "Each variable's value, by key: a string or a number, as the template declares it.",
      }),
  })
  .meta({ description: 'Send a published template instead of html and text (by its id or alias).' });

export interface TemplatedBodies {
  /** The request's body with every templated email rendered: what the email schema validates. */
  readonly body: unknown;
  /** The template id of each email, by its index (a single email's is index 0); undefined when not templated. */
  readonly templateIds: readonly (string | undefined)[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Renders the templated emails of a request (a single email's body, or a batch's array); the body as it is when
 * none is. 422 (all problems listed, each with its path) for: html or text beside a template, a bad `template`,
 * a template that is missing or only a draft, missing, unknown or mistyped variables, no from or subject on
 * either side, or renders that pass the request's byte budget (SF_MAX_SEND_BODY_BYTES).
 */
export async function renderTemplatedBodies(
  deps: { readonly templates: TemplateRepository; readonly maxSendBodyBytes?: number },
  tenant: Tenant,
  body: unknown,
  batch: boolean,
): Promise<TemplatedBodies> {
  const emails = batch ? (Array.isArray(body) ? body : null) : [body];
  if (!emails?.some((email) => isRecord(email) && email.template !== undefined)) return { body, templateIds: [] };
  const at = (i: number, field: string) => (batch ? `${i}.${field}` : field);
  const uses: (TemplateUse & { index: number })[] = [];
  const problems: { path: string; message: string }[] = [];
  for (const [index, email] of emails.entries()) {
    if (!isRecord(email) || email.template === undefined) continue;
    for (const field of ['html', 'text'] as const) {
      if (email[field] !== undefined) {
        problems.push({
          path: at(index, field),
          message: `Give ${field} or template, not both: a template has its own.`,
        });
      }
    }
    try {
      const template = validate(templateField, email.template);
      uses.push({ index, path: at(index, 'template'), ref: template.id, variables: template.variables ?? {} });
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      for (const d of error.details ?? []) {
        problems.push({ path: `${at(index, 'template')}${d.path === 'body' ? '' : `.${d.path}`}`, message: d.message });
      }
    }
  }
  if (problems.length) throw refusal(problems);
  const rendered = await renderTemplatedEmails(deps, tenant, uses, deps.maxSendBodyBytes ?? MAX_SEND_BODY_BYTES);
  const templateIds: (string | undefined)[] = emails.map(() => undefined);
  const merged: unknown[] = [...emails];
  for (const [n, use] of uses.entries()) {
    const email = emails[use.index] as Record<string, unknown>;
    const out = rendered[n];
    if (!out) continue;
    const { template: _template, ...rest } = email;
    for (const field of ['from', 'subject'] as const) {
      if (rest[field] === undefined && out[field] === undefined) {
        problems.push({
          path: at(use.index, field),
          message: `${field} is required: give it, or a default ${field} in the template (it has none).`,
        });
      }
    }
    merged[use.index] = {
      ...rest,
      ...(rest.from === undefined && out.from !== undefined ? { from: out.from } : {}),
      ...(rest.subject === undefined && out.subject !== undefined ? { subject: out.subject } : {}),
      ...(rest.reply_to === undefined && out.replyTo.length ? { reply_to: out.replyTo } : {}),
      html: out.html,
      ...(out.text !== undefined ? { text: out.text } : {}),
    };
    templateIds[use.index] = out.templateId;
  }
  if (problems.length) throw refusal(problems);
  return { body: batch ? merged : merged[0], templateIds };
}

function refusal(problems: readonly { path: string; message: string }[]): ValidationError {
  const first = problems[0] as { path: string; message: string };
  return new ValidationError(`${first.path}: ${first.message}`, { details: problems });
}
