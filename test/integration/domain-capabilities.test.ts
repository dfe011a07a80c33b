// Domain capabilities over real HTTP, as Resend's SDK sends them: `capabilities` on create and PATCH, shown on
// every domain object (sending on, receiving off by default), the MX record in `records` while receiving is on,
// receiving refused in test mode (422), unknown capability values refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(async () => {
  await rt.stop();
});

type DomainBody = {
  id: string;
  capabilities: { sending: string; receiving: string };
  records: { type: string; name: string; value: string; priority?: number }[];
};

const post = (key: string, body: unknown) => rt.call('/domains', { method: 'POST', key, body: JSON.stringify(body) });
const patch = (key: string, id: string, body: unknown) =>
  rt.call(`/domains/${id}`, { method: 'PATCH', key, body: JSON.stringify(body) });

describe('domain capabilities', () => {
  it('defaults to sending enabled and receiving disabled, with no MX record', async () => {
    const { key } = await rt.newKey({ mode: 'live' });

    const created = await post(key, { name: 'default.example.com' });

    expect(created.status).toBe(201);
    const body = (await created.json()) as DomainBody;
    expect(body.capabilities).toEqual({ sending: 'enabled', receiving: 'disabled' });
    expect(body.records.filter((record) => record.type === 'MX')).toEqual([]);
  });

  it('receiving enabled adds the MX record naming the local SMTP host; PATCH turns it off and on, shown on get and list', async () => {
    const { key } = await rt.newKey({ mode: 'live' });
    const created = (await (
      await post(key, { name: 'rx.example.com', capabilities: { receiving: 'enabled' } })
    ).json()) as DomainBody;

    const off = await patch(key, created.id, { capabilities: { receiving: 'disabled' } });
    const offBody = (await off.json()) as DomainBody;
    const on = (await (
      await patch(key, created.id, { capabilities: { receiving: 'enabled', sending: 'disabled' } })
    ).json()) as DomainBody;
    const read = (await (await rt.call(`/domains/${created.id}`, { key })).json()) as DomainBody;
    const listed = (await (await rt.call('/domains', { key })).json()) as { data: DomainBody[] };

    // Resend's record, ttl and status too: Sendflow does not look the MX record up, so it is not_started.
    const mx = {
      record: 'Receiving',
      type: 'MX',
      name: 'rx.example.com',
      value: '127.0.0.1',
      priority: 10,
      ttl: 'Auto',
      status: 'not_started',
    };
    expect(created.capabilities).toEqual({ sending: 'enabled', receiving: 'enabled' });
    expect(created.records).toContainEqual(mx);
    expect(off.status).toBe(200);
    expect(offBody.capabilities).toEqual({ sending: 'enabled', receiving: 'disabled' });
    expect(offBody.records.filter((record) => record.type === 'MX')).toEqual([]);
    expect(on.capabilities).toEqual({ sending: 'disabled', receiving: 'enabled' });
    expect(read).toMatchObject({ capabilities: { sending: 'disabled', receiving: 'enabled' } });
    expect(read.records).toContainEqual(mx);
    expect(listed.data.find((domain) => domain.id === created.id)?.capabilities.receiving).toBe('enabled');
  });

  it('receiving in test mode is 422 validation_error; a bad value or an unknown capability is 422 too', async () => {
    const { key } = await rt.newKey({ mode: 'test' });
    const domain = (await (await post(key, { name: 'test.example.com' })).json()) as DomainBody;

    const onCreate = await post(key, { name: 'rx-test.example.com', capabilities: { receiving: 'enabled' } });
    const onPatch = await patch(key, domain.id, { capabilities: { receiving: 'enabled' } });
    const badValue = await patch(key, domain.id, { capabilities: { sending: 'on' } });
    const unknown = await patch(key, domain.id, { capabilities: { forwarding: 'enabled' } });

    expect(onCreate.status).toBe(422);
    expect(await onCreate.json()).toMatchObject({ code: 'validation_error' });
    expect(onPatch.status).toBe(422);
    expect(badValue.status).toBe(422);
    expect(unknown.status).toBe(422);
    const list = (await (await rt.call('/domains', { key })).json()) as { data: DomainBody[] };
    expect(list.data.map((d) => d.capabilities)).toEqual([{ sending: 'enabled', receiving: 'disabled' }]);
  });
});
