// Domains as the Resend SDK sends them: create with Resend's optional fields (what we take, what we refuse with
// a clear 422), PATCH of the tracking flags, the tracking fields on every domain object, and Resend's fields on
// each DNS record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let key: string;
beforeAll(async () => {
  rt = await startTestRuntime();
  key = (await rt.newKey()).key;
});
afterAll(() => rt.stop());

const create = (body: unknown) => rt.call('/domains', { method: 'POST', key, body: JSON.stringify(body) });
const patch = (id: string, body: unknown) =>
  rt.call(`/domains/${id}`, { method: 'PATCH', key, body: JSON.stringify(body) });

describe("Resend's domain fields", () => {
  it('takes tls "opportunistic" (what SES does anyway) on create and on PATCH', async () => {
    const res = await create({ name: 'tls.example.com', tls: 'opportunistic', open_tracking: true });
    expect(res.status).toBe(201);
    const domain = (await res.json()) as { id: string };
    expect(domain).toMatchObject({ open_tracking: true, click_tracking: false });
    const updated = await patch(domain.id, { tls: 'opportunistic', click_tracking: true });
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({ open_tracking: true, click_tracking: true });
    const alone = await patch(domain.id, { tls: 'opportunistic' });
    expect(alone.status).toBe(200);
    expect(await alone.json()).toMatchObject({ open_tracking: true, click_tracking: true });
  });

  it.each([
    [{ region: 'us-east-1' }, 'region', 'invalid_region', /region it is deployed in/],
    [{ custom_return_path: 'send' }, 'custom_return_path', 'validation_error', /MAIL FROM/],
    [{ tls: 'enforced' }, 'tls', 'validation_error', /opportunistic/],
    [{ tracking_subdomain: 'links' }, 'tracking_subdomain', 'validation_error', /tracking domain/],
  ])('refuses %j on create with a 422 that says why', async (extra, path, name, message) => {
    const res = await create({ name: `refused-${path.replace(/_/g, '-')}.example.com`, ...extra });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { name: string; details: { path: string; message: string }[] };
    expect(body.name).toBe(name);
    expect(body.details).toEqual([{ path, message: expect.stringMatching(message) }]);
    const listed = (await (await rt.call('/domains', { key })).json()) as { data: { name: string }[] };
    expect(listed.data.map((d) => d.name)).not.toContain(`refused-${path.replace(/_/g, '-')}.example.com`);
  });

  it.each([
    [{ tls: 'enforced' }, 'tls'],
    [{ tracking_subdomain: 'links' }, 'tracking_subdomain'],
  ])('refuses %j on PATCH with a 422', async (body, path) => {
    const domain = (await (await create({ name: `patch-${path.replace(/_/g, '-')}.example.com` })).json()) as {
      id: string;
    };
    const res = await patch(domain.id, body);
    expect(res.status).toBe(422);
    expect(((await res.json()) as { details: { path: string }[] }).details.map((d) => d.path)).toEqual([path]);
  });

  it("each DKIM record carries Resend's record, ttl and status, its status the domain's (pending, then verified)", async () => {
    const domain = (await (await create({ name: 'records.example.com' })).json()) as {
      id: string;
      records: Record<string, unknown>[];
    };
    expect(domain.records).toHaveLength(3);
    for (const record of domain.records) {
      expect(record).toMatchObject({ record: 'DKIM', type: 'CNAME', ttl: 'Auto', status: 'pending' });
    }
    const verified = await rt.call(`/domains/${domain.id}/verify`, { method: 'POST', key });
    const after = (await verified.json()) as { status: string; records: Record<string, unknown>[] };
    expect(after.status).toBe('verified');
    expect(after.records.map((record) => record.status)).toEqual(['verified', 'verified', 'verified']);
    const listed = (await (await rt.call('/domains', { key })).json()) as { has_more: boolean };
    expect(listed.has_more).toBe(false);
  });
});
