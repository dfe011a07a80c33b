// The official `resend` SDK (resend@6, unmodified) drives templates against the local runtime as a Resend user
// would: create (+ publish, chained), get by id and by alias, list, update (a draft: sends keep the published
// version until the next publish), duplicate, remove; then emails.send and batch.send with `template`, whose
// rendered message is what the stored email (GET) holds and what was handed to the simulator, and whose events
// carry template_id to a webhook.
import type { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver';
import { resendClient } from '../support/resend';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let resend: Resend;
let key: string;
let receiver: Receiver;
beforeAll(async () => {
  rt = await startTestRuntime();
  receiver = await startReceiver();
  ({ key } = await rt.newKey());
  resend = resendClient(rt, key);
  const hook = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}/hooks`, events: ['email.sent', 'email.delivered'] }),
  });
  expect(hook.status).toBe(201);
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

const to = 'success@simulator.amazonses.com';
const ORDER_HTML = '<p>Hi {{{NAME}}}, your {{{PRODUCT}}} costs {{{PRICE}}}.</p>{{{NOTE}}}';

async function createOrderTemplate(alias: string) {
  return resend.templates
    .create({
      name: 'Order confirmation',
      alias,
      from: 'Acme <orders@acme.example>',
      subject: 'Your {{{PRODUCT}}}',
      html: ORDER_HTML,
      text: 'Hi {{{NAME}}}: {{{PRODUCT}}} for {{{PRICE}}}.',
      replyTo: 'help@acme.example',
      variables: [
        { key: 'NAME', type: 'string', fallbackValue: 'there' },
        { key: 'PRODUCT', type: 'string' },
        { key: 'PRICE', type: 'number', fallbackValue: 25 },
        { key: 'NOTE', type: 'string', fallbackValue: '' },
      ],
    })
    .publish();
}

async function emailOf(id: string) {
  const got = await resend.emails.get(id);
  expect(got.error).toBeNull();
  return got.data as unknown as {
    subject: string;
    from: string;
    reply_to: string[];
    html: string;
    text: string;
    template_id: string | null;
  };
}

describe('templates through the resend SDK, unmodified', () => {
  it('create().publish(), get by id and alias, list', async () => {
    const published = await createOrderTemplate('order-confirmation');
    expect(published.error).toBeNull();
    const id = published.data?.id as string;
    expect(published.data).toEqual({ object: 'template', id });

    const byId = await resend.templates.get(id);
    expect(byId.error).toBeNull();
    expect(byId.data).toMatchObject({
      object: 'template',
      id,
      name: 'Order confirmation',
      alias: 'order-confirmation',
      from: 'Acme <orders@acme.example>',
      subject: 'Your {{{PRODUCT}}}',
      html: ORDER_HTML,
      reply_to: ['help@acme.example'],
      status: 'published',
      has_unpublished_versions: false,
    });
    expect(byId.data?.published_at).toEqual(expect.any(String));
    expect(byId.data?.variables?.map((v) => [v.key, v.type, v.fallback_value])).toEqual([
      ['NAME', 'string', 'there'],
      ['PRODUCT', 'string', null],
      ['PRICE', 'number', 25],
      ['NOTE', 'string', ''],
    ]);
    const byAlias = await resend.templates.get('order-confirmation');
    expect(byAlias.data?.id).toBe(id);

    const listed = await resend.templates.list({ limit: 10 });
    expect(listed.error).toBeNull();
    expect(listed.data?.object).toBe('list');
    expect(listed.data?.data.find((t) => t.id === id)).toMatchObject({
      name: 'Order confirmation',
      alias: 'order-confirmation',
      status: 'published',
    });
  });

  it('emails.send({ template }) renders the published version: variables escaped in html, fallbacks, defaults', async () => {
    const created = await createOrderTemplate('order-send');
    const templateId = created.data?.id as string;
    const sent = await resend.emails.send({
      to,
      template: { id: 'order-send', variables: { NAME: 'Ada <script>&', PRODUCT: 'Vintage "Mac"' } },
    });
    expect(sent.error).toBeNull();
    const email = await emailOf(sent.data?.id as string);
    expect(email).toMatchObject({
      from: 'Acme <orders@acme.example>',
      subject: 'Your Vintage "Mac"',
      reply_to: ['help@acme.example'],
      html: '<p>Hi Ada &lt;script&gt;&amp;, your Vintage &quot;Mac&quot; costs 25.</p>',
      text: 'Hi Ada <script>&: Vintage "Mac" for 25.',
      template_id: templateId,
    });

    // The request's own from and subject win over the template's.
    const own = await resend.emails.send({
      from: 'Shop <shop@acme.example>',
      subject: 'Thanks',
      to,
      template: { id: templateId, variables: { PRODUCT: 'Disk', PRICE: 9.5 } },
    });
    expect(own.error).toBeNull();
    expect(await emailOf(own.data?.id as string)).toMatchObject({
      from: 'Shop <shop@acme.example>',
      subject: 'Thanks',
      html: '<p>Hi there, your Disk costs 9.5.</p>',
    });
  });

  it('update() changes the draft only; sends render the published version until publish()', async () => {
    const created = await createOrderTemplate('order-update');
    const id = created.data?.id as string;
    const updated = await resend.templates.update(id, { html: '<h1>New {{{PRODUCT}}}</h1>', name: 'Order v2' });
    expect(updated.error).toBeNull();
    expect(updated.data).toEqual({ object: 'template', id });
    const draft = await resend.templates.get(id);
    expect(draft.data).toMatchObject({
      name: 'Order v2',
      html: '<h1>New {{{PRODUCT}}}</h1>',
      has_unpublished_versions: true,
    });

    const before = await resend.emails.send({ to, template: { id, variables: { PRODUCT: 'Lamp' } } });
    expect((await emailOf(before.data?.id as string)).html).toBe('<p>Hi there, your Lamp costs 25.</p>');

    expect((await resend.templates.publish(id)).error).toBeNull();
    expect((await resend.templates.get(id)).data).toMatchObject({ has_unpublished_versions: false });
    const after = await resend.emails.send({ to, template: { id, variables: { PRODUCT: 'Lamp' } } });
    expect((await emailOf(after.data?.id as string)).html).toBe('<h1>New Lamp</h1>');
  });

  it('duplicate() makes a draft copy; a draft cannot be sent (422 naming it); remove() deletes', async () => {
    const created = await createOrderTemplate('order-dup');
    const id = created.data?.id as string;
    const copy = await resend.templates.duplicate(id);
    expect(copy.error).toBeNull();
    const copyId = copy.data?.id as string;
    expect(copyId).not.toBe(id);
    expect((await resend.templates.get(copyId)).data).toMatchObject({
      name: 'Order confirmation (copy)',
      alias: null,
      status: 'draft',
      html: ORDER_HTML,
    });

    const draftSend = await resend.emails.send({ to, template: { id: copyId, variables: { PRODUCT: 'x' } } });
    expect(draftSend.data).toBeNull();
    expect(draftSend.error).toMatchObject({ statusCode: 422 });
    expect(draftSend.error?.message).toContain(`${copyId} is a draft`);

    const removed = await resend.templates.remove(copyId);
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual({ object: 'template', id: copyId, deleted: true });
    expect((await resend.templates.get(copyId)).error).toMatchObject({ statusCode: 404 });
    const byAlias = await resend.templates.remove('order-dup');
    expect(byAlias.data).toEqual({ object: 'template', id, deleted: true });
    expect((await resend.templates.get('order-dup')).error).toMatchObject({ statusCode: 404 });
  });

  it('a missing or an unknown variable is a 422 naming it, and nothing is sent', async () => {
    await createOrderTemplate('order-errors');
    const missing = await resend.emails.send({ to, template: { id: 'order-errors', variables: {} } });
    expect(missing.error).toMatchObject({ statusCode: 422 });
    expect(missing.error?.message).toContain('PRODUCT is required');
    const unknown = await resend.emails.send({
      to,
      template: { id: 'order-errors', variables: { PRODUCT: 'x', COLOUR: 'red' } },
    });
    expect(unknown.error?.message).toContain('COLOUR is not a variable of this template');
    const wrongType = await resend.emails.send({
      to,
      template: { id: 'order-errors', variables: { PRODUCT: 'x', PRICE: 'cheap' } },
    });
    expect(wrongType.error?.message).toContain('PRICE is a number variable');
  });

  it('batch.send with templates (and without): each rendered, stored and handed to the simulator; events carry template_id', async () => {
    const created = await createOrderTemplate('order-batch');
    const templateId = created.data?.id as string;
    const batch = await resend.batch.send([
      { to, template: { id: 'order-batch', variables: { NAME: 'Ada', PRODUCT: 'Pen' } } },
      { to, template: { id: templateId, variables: { NAME: 'Bob', PRODUCT: 'Ink', PRICE: 3 } } },
      { from: 'hi@acme.example', to, subject: 'Plain', html: '<p>plain</p>' },
    ]);
    expect(batch.error).toBeNull();
    const ids = (batch.data?.data ?? []).map((e) => e.id);
    expect(ids).toHaveLength(3);
    await rt.settle();

    const [ada, bob, plain] = await Promise.all(ids.map(emailOf));
    expect(ada).toMatchObject({
      subject: 'Your Pen',
      html: '<p>Hi Ada, your Pen costs 25.</p>',
      template_id: templateId,
    });
    expect(bob).toMatchObject({
      subject: 'Your Ink',
      html: '<p>Hi Bob, your Ink costs 3.</p>',
      template_id: templateId,
    });
    expect(plain).toMatchObject({ subject: 'Plain', template_id: null });

    // What the send worker handed over is the stored email (the simulator tells email.delivered for it).
    const sentEvents = receiver.received
      .map((r) => JSON.parse(r.body) as { type: string; email_id: string; data: Record<string, unknown> })
      .filter((p) => ids.includes(p.email_id));
    const byEmail = (id: string, type: string) => sentEvents.find((p) => p.email_id === id && p.type === type);
    for (const id of ids.slice(0, 2)) {
      expect(byEmail(id, 'email.sent')?.data).toMatchObject({
        template_id: templateId,
        from: 'Acme <orders@acme.example>',
      });
      expect(byEmail(id, 'email.delivered')?.data).toMatchObject({ template_id: templateId });
    }
    const plainSent = byEmail(ids[2] as string, 'email.sent');
    expect(plainSent?.data).toMatchObject({ subject: 'Plain' });
    expect(plainSent?.data).not.toHaveProperty('template_id');
    expect(byEmail(ids[0] as string, 'email.sent')?.data).toMatchObject({ subject: 'Your Pen' });
  });

  it('a batch with one bad templated email refuses them all, naming its index', async () => {
    await createOrderTemplate('order-batch-bad');
    const before = (await resend.emails.list({ limit: 100 })).data?.data.length ?? 0;
    const batch = await resend.batch.send([
      { to, template: { id: 'order-batch-bad', variables: { PRODUCT: 'Pen' } } },
      { to, template: { id: 'order-batch-bad', variables: {} } },
    ]);
    expect(batch.data).toBeNull();
    expect(batch.error).toMatchObject({ statusCode: 422 });
    expect(batch.error?.message).toContain('1.template.variables.PRODUCT');
    expect((await resend.emails.list({ limit: 100 })).data?.data.length ?? 0).toBe(before);
  });
});
