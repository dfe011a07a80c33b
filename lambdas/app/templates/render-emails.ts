// Sends by template (POST /v1/emails and /v1/emails/batch with `template: {id, variables}`): each template's
// published version is read once per request, its variables resolved (given, else fallback; missing and unknown
// ones refused by name) and rendered: HTML-escaped into `html` (unless declared unescaped), as given into the
// subject and the text. Everything a request renders shares one byte budget, so a request by template stores no
// more than it could have sent inline. Nothing is written here: a refusal changes nothing.
import { ValidationError } from '../../domain/errors';
import { type RenderBudget, RenderBudgetExceeded, renderTemplate } from '../../domain/templates/syntax';
import { type Problem, parseContent, resolveValues } from '../../domain/templates/templates';
import type { Tenant } from '../webhooks/ports';
import type { TemplateRepository } from './ports';
import { publishedVersion } from './templates';

export interface TemplateUse {
  /** Where the email is in the request: `template` of a single email, `3.template` of a batch's fourth. */
  readonly path: string;
  /** The template's id or alias. */
  readonly ref: string;
  readonly variables: Readonly<Record<string, unknown>>;
}

export interface RenderedTemplate {
  readonly templateId: string;
  readonly subject?: string;
  readonly html: string;
  readonly text?: string;
  readonly from?: string;
  readonly replyTo: readonly string[];
}

/**
 * The rendered emails, in the order of `uses`; one ValidationError listing every problem (each with its path)
 * when any is refused. `maxBytes`: what the request's renders may produce together (UTF-8 bytes).
 */
export async function renderTemplatedEmails(
  deps: { readonly templates: TemplateRepository },
  tenant: Tenant,
  uses: readonly TemplateUse[],
  maxBytes: number,
): Promise<RenderedTemplate[]> {
  const versions = new Map<string, ReturnType<typeof publishedVersion>>();
  for (const use of uses) {
    if (versions.has(use.ref)) continue;
    const read = publishedVersion(deps, tenant, use.ref);
    // Awaited below, unless an earlier problem ends the loop first: never an unhandled rejection.
    read.catch(() => {});
    versions.set(use.ref, read);
  }
  const problems: Problem[] = [];
  const budget: RenderBudget = { remaining: maxBytes };
  const rendered: RenderedTemplate[] = [];
  for (const use of uses) {
    const found = await (versions.get(use.ref) as ReturnType<typeof publishedVersion>);
    if ('problem' in found) {
      problems.push({ path: `${use.path}.id`, message: found.problem });
      continue;
    }
    const { record, version } = found;
    // Stored versions were parsed when they were saved; parsing again costs one pass and proves it.
    const parsed = parseContent(version);
    if (!parsed.ok) throw new Error(`stored template version ${version.id} does not parse`);
    const { values, problems: valueProblems } = resolveValues(version, parsed.parsed, use.variables);
    if (valueProblems.length) {
      problems.push(...valueProblems.map((p) => ({ path: `${use.path}.${p.path}`, message: p.message })));
      continue;
    }
    if (problems.length) continue;
    try {
      const { subject, html, text } = parsed.parsed;
      rendered.push({
        templateId: record.id,
        ...(subject ? { subject: renderTemplate(subject, values, { escape: false, budget }) } : {}),
        html: renderTemplate(html, values, { escape: true, budget }),
        ...(text ? { text: renderTemplate(text, values, { escape: false, budget }) } : {}),
        ...(version.from !== undefined ? { from: version.from } : {}),
        replyTo: version.replyTo,
      });
    } catch (error) {
      if (!(error instanceof RenderBudgetExceeded)) throw error;
      problems.push({
        path: use.path,
        message: `The rendered emails of this request pass ${maxBytes} bytes together (what a request may send inline); send fewer at once or give shorter values.`,
      });
      break;
    }
  }
  if (problems.length) {
    const first = problems[0] as Problem;
    throw new ValidationError(`${first.path}: ${first.message}`, { details: problems });
  }
  return rendered;
}
