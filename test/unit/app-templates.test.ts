// The template use cases (lambdas/app/templates) on the in-memory repository: drafts and published versions
// (an update never changes what sends render; versions no record names are cleaned up), aliases (unique, a stale
// claim taken over, released on change and delete), the per-mode limit, changes that race, and sends: each
// template read once per request, one render budget for all of it, problems named by path.
import { describe, expect, it } from 'vitest';
import { renderTemplatedEmails } from '../../lambdas/app/templates/render-emails';
import {
  createTemplate,
  deleteTemplate,
  duplicateTemplate,
  getTemplate,
  publishedVersion,
  publishTemplate,
  type TemplateDeps,
  updateTemplate,
} from '../../lambdas/app/templates/templates';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import { ConflictError, LimitExceededError, NotFoundError, ValidationError } from '../../lambdas/domain/errors';
import { TEMPLATE_LIMITS } from '../../lambdas/domain/templates/templates';
import { FakeClock, seededRandom } from '../support/fakes';
import { InMemoryTemplateRepository } from '../support/template-fake';

const tenant: Tenant = { accountId: 'acct_1', mode: 'test' };

function world() {
  const templates = new InMemoryTemplateRepository();
  const clock = new FakeClock();
  const deps: TemplateDeps = { templates, clock, random: seededRandom() };
  return { deps, templates, clock };
}

const input = { name: 'Welcome', html: '<p>Hi {{{NAME}}}</p>', subject: 'Hi {{{NAME}}}' };

describe('drafts and published versions', () => {
  it('an update makes a new draft; sends keep the published version; unreferenced versions are deleted', async () => {
    // Arrange
    const { deps, templates, clock } = world();
    const created = await createTemplate(deps, tenant, input);
    const published = await publishTemplate(deps, tenant, created.id);
    clock.advance(1000);

    // Act
    const first = await updateTemplate(deps, tenant, created.id, { html: '<p>v2 {{{NAME}}}</p>' });
    const second = await updateTemplate(deps, tenant, created.id, { html: '<p>v3 {{{NAME}}}</p>' });

    // Assert
    expect(second.publishedVersionId).toBe(published.publishedVersionId);
    expect(second.draftVersionId).not.toBe(first.draftVersionId);
    const sent = await publishedVersion(deps, tenant, created.id);
    expect('version' in sent && sent.version.html).toBe('<p>Hi {{{NAME}}}</p>');
    expect((await getTemplate(deps, tenant, created.id)).draft.html).toBe('<p>v3 {{{NAME}}}</p>');
    // The published version and the latest draft, nothing else.
    expect(templates.versionIds(tenant, created.id)).toEqual(
      [published.publishedVersionId, second.draftVersionId].sort(),
    );
  });

  it('publish moves the published pointer and deletes the version it replaced; publishing again changes nothing', async () => {
    const { deps, templates } = world();
    const created = await createTemplate(deps, tenant, input);
    const v1 = await publishTemplate(deps, tenant, created.id);
    await updateTemplate(deps, tenant, created.id, { text: 'plain' });

    const v2 = await publishTemplate(deps, tenant, created.id);
    const again = await publishTemplate(deps, tenant, created.id);

    expect(v2.publishedVersionId).not.toBe(v1.publishedVersionId);
    expect(again).toEqual(v2);
    expect(templates.versionIds(tenant, created.id)).toEqual([v2.publishedVersionId]);
  });

  it('a draft-only template is not sendable; an unknown one is named', async () => {
    const { deps } = world();
    const created = await createTemplate(deps, tenant, input);
    expect(await publishedVersion(deps, tenant, created.id)).toEqual({
      problem: `Template ${created.id} is a draft: publish it (POST /v1/templates/${created.id}/publish) first.`,
    });
    expect(await publishedVersion(deps, tenant, 'nope')).toEqual({
      problem: 'No template with id or alias "nope" in test mode.',
    });
  });

  it('an update that only renames writes no version; null clears optional fields', async () => {
    const { deps, templates } = world();
    const created = await createTemplate(deps, tenant, { ...input, text: 't', from: 'a@b.example' });
    const renamed = await updateTemplate(deps, tenant, created.id, { name: 'Renamed' });
    expect(renamed.draftVersionId).toBe(created.draftVersionId);
    expect(templates.versionIds(tenant, created.id)).toEqual([created.draftVersionId]);
    await updateTemplate(deps, tenant, created.id, { text: null, from: null });
    const { draft, record } = await getTemplate(deps, tenant, created.id);
    expect(record.name).toBe('Renamed');
    expect(draft).not.toHaveProperty('text');
    expect(draft).not.toHaveProperty('from');
  });

  it('a variable keeps created_at across versions, and updated_at until its declaration changes', async () => {
    const { deps, clock } = world();
    const variables = [
      { key: 'NAME', type: 'string' as const, fallback: 'a' },
      { key: 'X', type: 'string' as const },
    ];
    const created = await createTemplate(deps, tenant, { ...input, variables });
    const t0 = new Date(clock.now()).toISOString();
    clock.advance(60_000);
    await updateTemplate(deps, tenant, created.id, {
      variables: [
        { key: 'NAME', type: 'string', fallback: 'b' },
        { key: 'X', type: 'string' },
      ],
    });
    const { draft } = await getTemplate(deps, tenant, created.id);
    const t1 = new Date(clock.now()).toISOString();
    expect(draft.variables.map((v) => [v.key, v.createdAt, v.updatedAt])).toEqual([
      ['NAME', t0, t1],
      ['X', t0, t0],
    ]);
  });

  it('refuses invalid content with every problem, storing nothing', async () => {
    const { deps, templates } = world();
    const refused = createTemplate(deps, tenant, {
      name: 'x',
      html: '{{#each}}',
      variables: [{ key: 'EMAIL', type: 'string' }],
    });
    await expect(refused).rejects.toThrow(ValidationError);
    await refused.catch((error: ValidationError) =>
      expect(error.details?.map((d) => d.path)).toEqual(['html', 'variables.0.key']),
    );
    expect(templates.records.size + templates.versions.size).toBe(0);
  });
});

describe('aliases', () => {
  it('are unique per tenant (409), free across modes, and resolve like ids', async () => {
    const { deps } = world();
    const a = await createTemplate(deps, tenant, { ...input, alias: 'welcome' });
    await expect(createTemplate(deps, tenant, { ...input, alias: 'welcome' })).rejects.toThrow(ConflictError);
    const live = await createTemplate(deps, { ...tenant, mode: 'live' }, { ...input, alias: 'welcome' });
    expect((await getTemplate(deps, tenant, 'welcome')).record.id).toBe(a.id);
    expect((await getTemplate(deps, { ...tenant, mode: 'live' }, 'welcome')).record.id).toBe(live.id);
  });

  it('a claim whose template no longer has the alias (a crash, a delete) is taken over', async () => {
    const { deps, templates } = world();
    await templates.claimAlias(tenant, 'orphan', 'tpl_gone');
    const b = await createTemplate(deps, tenant, { ...input, alias: 'orphan' });
    expect(await templates.aliasOwner(tenant, 'orphan')).toBe(b.id);
  });

  it('moves with an update (the old one freed) and goes with a delete', async () => {
    const { deps, templates } = world();
    const a = await createTemplate(deps, tenant, { ...input, alias: 'one' });
    await updateTemplate(deps, tenant, 'one', { alias: 'two' });
    expect(await templates.aliasOwner(tenant, 'one')).toBeNull();
    await expect(getTemplate(deps, tenant, 'one')).rejects.toThrow(NotFoundError);
    expect((await getTemplate(deps, tenant, 'two')).record.id).toBe(a.id);
    await deleteTemplate(deps, tenant, 'two');
    expect(await templates.aliasOwner(tenant, 'two')).toBeNull();
    expect(templates.versionIds(tenant, a.id)).toEqual([]);
  });

  it('a duplicate has no alias and is a draft', async () => {
    const { deps } = world();
    const a = await createTemplate(deps, tenant, { ...input, alias: 'orig' });
    await publishTemplate(deps, tenant, a.id);
    const copy = await duplicateTemplate(deps, tenant, 'orig');
    expect(copy).toMatchObject({ name: 'Welcome (copy)' });
    expect(copy.alias).toBeUndefined();
    expect(copy.publishedVersionId).toBeUndefined();
  });
});

describe('limits and races', () => {
  it(`refuses a template past ${TEMPLATE_LIMITS.perMode} per mode (422 limit_exceeded)`, async () => {
    const { deps, templates } = world();
    templates.count = async () => TEMPLATE_LIMITS.perMode;
    await expect(createTemplate(deps, tenant, input)).rejects.toThrow(LimitExceededError);
  });

  it('an update overtaken by another change reads again; one overtaken every time is a 409 that leaves nothing', async () => {
    const { deps, templates } = world();
    const created = await createTemplate(deps, tenant, input);
    const replace = templates.replace.bind(templates);
    let overtaken = 1;
    templates.replace = async (next, rev) => (overtaken-- > 0 ? false : replace(next, rev));
    await updateTemplate(deps, tenant, created.id, { html: '<p>after one race</p>' });
    expect((await getTemplate(deps, tenant, created.id)).draft.html).toBe('<p>after one race</p>');

    templates.replace = async () => false;
    const before = templates.versionIds(tenant, created.id);
    await expect(updateTemplate(deps, tenant, created.id, { html: '<p>never</p>', alias: 'new' })).rejects.toThrow(
      ConflictError,
    );
    expect(templates.versionIds(tenant, created.id)).toEqual(before);
    expect(await templates.aliasOwner(tenant, 'new')).toBeNull();
  });

  it('a draft deleted between the record read and the version read (a concurrent update) is read again', async () => {
    const { deps, templates } = world();
    const created = await createTemplate(deps, tenant, input);
    const getVersion = templates.getVersion.bind(templates);
    let first = true;
    templates.getVersion = async (t, id, v) => {
      if (!first) return getVersion(t, id, v);
      first = false;
      await updateTemplate(deps, tenant, created.id, { html: '<p>raced</p>' });
      return getVersion(t, id, v);
    };
    expect((await getTemplate(deps, tenant, created.id)).draft.html).toBe('<p>raced</p>');
  });
});

describe('renderTemplatedEmails', () => {
  it('reads each template once per request and renders each email with its own values', async () => {
    const { deps, templates } = world();
    const a = await createTemplate(deps, tenant, { ...input, alias: 'a', text: 'Hi {{{NAME}}}' });
    await publishTemplate(deps, tenant, a.id);
    let reads = 0;
    const getVersion = templates.getVersion.bind(templates);
    templates.getVersion = async (...args) => {
      reads += 1;
      return getVersion(...args);
    };
    const rendered = await renderTemplatedEmails(
      deps,
      tenant,
      [
        { path: '0.template', ref: 'a', variables: { NAME: '<Ada>' } },
        { path: '1.template', ref: 'a', variables: { NAME: 'Bob' } },
      ],
      10_000,
    );
    expect(reads).toBe(1);
    expect(rendered).toEqual([
      { templateId: a.id, subject: 'Hi <Ada>', html: '<p>Hi &lt;Ada&gt;</p>', text: 'Hi <Ada>', replyTo: [] },
      { templateId: a.id, subject: 'Hi Bob', html: '<p>Hi Bob</p>', text: 'Hi Bob', replyTo: [] },
    ]);
  });

  it('shares one byte budget between the emails of a request, and names every problem by path', async () => {
    const { deps } = world();
    const a = await createTemplate(deps, tenant, input);
    await publishTemplate(deps, tenant, a.id);
    const use = (i: number, NAME: string) => ({ path: `${i}.template`, ref: a.id, variables: { NAME } });
    // Each email renders to about 2 x 600 bytes: two fit in 3,000, three do not.
    await expect(
      renderTemplatedEmails(deps, tenant, [use(0, 'x'.repeat(600)), use(1, 'y'.repeat(600))], 3_000),
    ).resolves.toHaveLength(2);
    const over = renderTemplatedEmails(
      deps,
      tenant,
      [0, 1, 2].map((i) => use(i, 'z'.repeat(600))),
      3_000,
    );
    await expect(over).rejects.toThrow(/2\.template: The rendered emails of this request pass 3000 bytes/);

    const many = renderTemplatedEmails(
      deps,
      tenant,
      [
        { path: '0.template', ref: 'nope', variables: {} },
        { path: '1.template', ref: a.id, variables: {} },
      ],
      3_000,
    );
    await many.catch((error: ValidationError) =>
      expect(error.details?.map((d) => d.path)).toEqual(['0.template.id', '1.template.variables.NAME']),
    );
    await expect(many).rejects.toThrow(ValidationError);
  });
});
