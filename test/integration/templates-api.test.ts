// /v1/templates and sends by template over raw HTTP, for what the SDK test does not show: who may do what
// (full access to manage; email:send to send by template), tenants and modes apart, hostile or invalid templates
// refused with the field and position named and nothing stored, unescaped variables, a request's render budget,
// and a scheduled email keeping what it was rendered to when it was accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountKey } from '../../lambdas/app/accounts';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let key: string;
let accountId: string;
beforeAll(async () => {
  rt = await startTestRuntime();
  ({ key, accountId } = await rt.newKey());
});
afterAll(() => rt.stop());

const to = 'success@simulator.amazonses.com';

async function call(path: string, init: { method?: string; body?: unknown; key?: string } = {}) {
  const response = await rt.call(path, {
    method: init.method ?? 'GET',
    key: init.key ?? key,
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & { message?: string } };
}

async function published(body: Record<string, unknown>, as = key): Promise<string> {
  const created = await call('/templates', { method: 'POST', body, key: as });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  expect((await call(`/templates/${id}/publish`, { method: 'POST', key: as })).status).toBe(200);
  return id;
}

describe('who may use templates', () => {
  it('a sending key cannot read or manage templates (403) but sends by one', async () => {
    const id = await published({ name: 'n', html: '<p>{{{X}}}</p>', subject: 's', from: 'a@acme.example' });
    const { key: sending } = await createAccountKey(rt.admin, { accountId, mode: 'test', scopes: ['email:send'] }).then(
      (issued) => ({ key: issued.secret }),
    );
    expect((await call('/templates', { key: sending })).status).toBe(403);
    expect((await call(`/templates/${id}`, { key: sending })).status).toBe(403);
    expect((await call('/templates', { method: 'POST', key: sending, body: { name: 'x', html: 'x' } })).status).toBe(
      403,
    );
    const sent = await call('/emails', {
      method: 'POST',
      key: sending,
      body: { to, template: { id, variables: { X: '1' } } },
    });
    expect(sent.status).toBe(200);
  });

  it('another account, or the other mode, sees no template: 404 to read, 422 naming it to send', async () => {
    const id = await published({ name: 'mine', html: '<p>x</p>', subject: 's', from: 'a@acme.example', alias: 'mine' });
    const other = (await rt.newKey()).key;
    const live = (await createAccountKey(rt.admin, { accountId, mode: 'live' })).secret;
    for (const stranger of [other, live]) {
      expect((await call(`/templates/${id}`, { key: stranger })).status).toBe(404);
      expect((await call('/templates/mine', { key: stranger })).status).toBe(404);
      expect((await call(`/templates/${id}/publish`, { method: 'POST', key: stranger })).status).toBe(404);
      expect((await call(`/templates/${id}`, { method: 'DELETE', key: stranger })).status).toBe(404);
      const listed = await call('/templates', { key: stranger });
      expect((listed.body.data as { id: string }[]).map((t) => t.id)).not.toContain(id);
    }
    const sent = await call('/emails', { method: 'POST', key: other, body: { to, template: { id } } });
    expect(sent.status).toBe(422);
    expect(sent.body.message).toContain(`template.id: No template with id or alias "${id}" in test mode.`);
    expect((await call(`/templates/${id}`)).status).toBe(200);
  });
});

describe('templates refused, nothing stored', () => {
  it.each([
    ['a mustache section', '<ul>{{#each items}}<li>{{name}}</li>{{/each}}</ul>', 'line 1, column 5'],
    ['a partial', '<p>ok</p>\n{{> footer}}', 'line 2, column 1'],
    ['a property lookup', '{{{constructor.constructor}}}', 'line 1, column 1'],
    ['an unterminated variable', '<p>{{{NAME</p>', 'line 1, column 4'],
  ])('%s (422 naming html and where)', async (_what, html, where) => {
    const fresh = (await rt.newKey()).key;
    const refused = await call('/templates', { method: 'POST', key: fresh, body: { name: 'bad', html } });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toContain(`html: ${where}`);
    expect((await call('/templates', { key: fresh })).body.data).toEqual([]);
  });

  it('invalid declarations, each named by path', async () => {
    const refused = await call('/templates', {
      method: 'POST',
      body: {
        name: 'bad',
        html: '<p>{{{A}}}</p>',
        variables: [
          { key: 'EMAIL', type: 'string' },
          { key: 'A', type: 'number', fallback_value: 'one' },
          { key: 'B', type: 'number', unescaped: true },
          { key: 'a b', type: 'string' },
        ],
      },
    });
    expect(refused.status).toBe(422);
    expect((refused.body.details as { path: string }[]).map((d) => d.path)).toEqual([
      'variables.0.key',
      'variables.1.fallback_value',
      'variables.2.unescaped',
      'variables.3.key',
    ]);
  });

  it('more than 256 KiB of html and text, an alias like an id, a taken alias (409), an unknown field', async () => {
    const huge = await call('/templates', { method: 'POST', body: { name: 'huge', html: 'x'.repeat(262_145) } });
    expect(huge.status).toBe(422);
    expect(huge.body.message).toContain('at most 262144');
    const idLike = await call('/templates', { method: 'POST', body: { name: 'a', html: 'x', alias: 'tpl_x' } });
    expect(idLike.status).toBe(422);
    await published({ name: 'taken', html: 'x', alias: 'taken-alias' });
    const taken = await call('/templates', { method: 'POST', body: { name: 'b', html: 'x', alias: 'taken-alias' } });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('alias_taken');
    expect(
      (await call('/templates', { method: 'POST', body: { name: 'a', html: 'x', replyTo: 'a@b.example' } })).status,
    ).toBe(422);
  });
});

describe('sending by template', () => {
  it('an unescaped variable goes into html as given; the others are escaped', async () => {
    const id = await published({
      name: 'digest',
      html: '<h1>{{{TITLE}}}</h1>{{{ITEMS}}}',
      subject: '{{{TITLE}}}',
      from: 'news@acme.example',
      variables: [
        { key: 'TITLE', type: 'string' },
        { key: 'ITEMS', type: 'string', unescaped: true },
      ],
    });
    const got = await call(`/templates/${id}`);
    expect(got.body.variables).toMatchObject([
      { key: 'TITLE', unescaped: false },
      { key: 'ITEMS', unescaped: true },
    ]);
    const sent = await call('/emails', {
      method: 'POST',
      body: { to, template: { id, variables: { TITLE: 'A & B', ITEMS: '<ul><li>one</li></ul>' } } },
    });
    expect(sent.status).toBe(200);
    const email = await call(`/emails/${sent.body.id}`);
    expect(email.body).toMatchObject({
      subject: 'A & B',
      html: '<h1>A &amp; B</h1><ul><li>one</li></ul>',
      template_id: id,
    });
  });

  it('html beside a template, or no subject on either side, is a 422 naming the field', async () => {
    const id = await published({ name: 'nosubject', html: '<p>x</p>', from: 'a@acme.example' });
    const both = await call('/emails', { method: 'POST', body: { to, html: '<p>y</p>', template: { id } } });
    expect(both.status).toBe(422);
    expect(both.body.message).toContain('html: Give html or template, not both');
    const noSubject = await call('/emails', { method: 'POST', body: { to, template: { id } } });
    expect(noSubject.status).toBe(422);
    expect(noSubject.body.message).toContain('subject: subject is required');
    const badShape = await call('/emails', { method: 'POST', body: { to, subject: 's', template: { alias: id } } });
    expect(badShape.status).toBe(422);
    expect((badShape.body.details as { path: string }[])[0]?.path).toMatch(/^template/);
  });

  it("a request's renders together stay within the send body limit (422 naming the email that passed it)", async () => {
    // 100 tags of a 400-character value: about 40 KB an email from a request of a few hundred bytes each.
    const id = await published({
      name: 'amplifier',
      html: '{{{V}}}'.repeat(100),
      subject: 's',
      from: 'a@acme.example',
    });
    const email = { to, template: { id, variables: { V: 'v'.repeat(400) } } };
    const ok = await call('/emails/batch', { method: 'POST', body: Array.from({ length: 10 }, () => email) });
    expect(ok.status).toBe(200);
    const tooMuch = await call('/emails/batch', { method: 'POST', body: Array.from({ length: 100 }, () => email) });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.message).toMatch(/^\d+\.template: The rendered emails of this request pass 3000000 bytes/);
  });

  it('a scheduled email keeps what it was rendered to at acceptance, whatever is published later', async () => {
    const id = await published({ name: 'later', html: '<p>v1 {{{X}}}</p>', subject: 's', from: 'a@acme.example' });
    const scheduledAt = new Date(Date.now() + 3_600_000).toISOString();
    const sent = await call('/emails', {
      method: 'POST',
      body: { to, scheduled_at: scheduledAt, template: { id, variables: { X: 'x' } } },
    });
    expect(sent.status).toBe(200);
    await call(`/templates/${id}`, { method: 'PATCH', body: { html: '<p>v2</p>' } });
    await call(`/templates/${id}/publish`, { method: 'POST' });
    expect((await call(`/emails/${sent.body.id}`)).body).toMatchObject({ html: '<p>v1 x</p>', template_id: id });
  });
});
