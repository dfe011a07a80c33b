// The dashboard's list filters over real HTTP on the local runtime: event type and a time window (UTC) on the
// overview's recent deliveries, a webhook's delivery log, an email's deliveries, and the email list (window
// only), as GET forms read back from the URL; the paging links keep every filter; a malformed or reversed
// window is said next to its field and not sent to the API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignInLink } from '../../lambdas/app/dashboard/sign-in';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  rt = await startTestRuntime({ SF_SIMULATOR_STEP_SECONDS: '0.05' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

const dash = (path: string) => `${rt.url}/dashboard${path}`;

async function session(accountId: string): Promise<string> {
  const { url } = await createSignInLink(rt.services, { accountId, mode: 'test', baseUrl: rt.url });
  const token = new URL(url).searchParams.get('token') ?? '';
  const res = await fetch(dash('/sign-in'), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  return (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

/** The delivery ids a page links to, in order. */
const deliveryLinks = (page: string) => [...page.matchAll(/\/deliveries\/(dlv_[0-9a-z]+)"/g)].map((m) => m[1]);
const decode = (href: string) => href.replace(/&amp;/g, '&');

describe('dashboard list filters', () => {
  it('filters the delivery logs by event type and time, keeps the filters when paging, and says a bad time next to its field', async () => {
    const { key, accountId } = await rt.newKey();
    const post = (path: string, body: unknown) => rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });
    const hook = (
      (await (
        await post('/webhooks', { url: `${receiver.url}/dash`, events: ['email.sent', 'email.bounced'] })
      ).json()) as { id: string }
    ).id;
    const email = (
      (await (
        await post('/emails', {
          from: 'Acme <hi@acme.test>',
          to: 'bounce@simulator.amazonses.com',
          subject: 'F',
          html: '<p>x</p>',
        })
      ).json()) as { id: string }
    ).id;
    await rt.settle();
    for (let i = 0; i < 22; i++) await post(`/webhooks/${hook}/test`, {});
    await rt.settle();
    const api = async (path: string) =>
      ((await (await rt.call(path, { key })).json()) as { data: { id: string; event: string; created_at: string }[] })
        .data;
    const log = await api(`/webhooks/${hook}/deliveries?limit=100`);
    const tests = log.filter((d) => d.event === 'test').map((d) => d.id);
    const bounced = log.filter((d) => d.event === 'email.bounced').map((d) => d.id);
    const cookie = await session(accountId);
    const page = async (path: string) => {
      const res = await fetch(dash(path), { headers: { cookie } });
      expect(res.status, path).toBe(200);
      return res.text();
    };

    // A webhook's log: 20 test sends, then the older page by the link, which keeps event_type.
    const first = await page(`/webhooks/${hook}/deliveries?event_type=test`);
    const older = /href="([^"]*\/deliveries\?[^"]*after=[^"]*)">Older deliveries/.exec(first)?.[1] ?? '';
    const second = await page(decode(older).replace('/v1/dashboard', ''));
    const onlyBounced = await page(`/webhooks/${hook}/deliveries?event_type=email.bounced`);
    const future = await page(`/webhooks/${hook}/deliveries?since=2999-01-01T00:00`);
    const bad = await page(`/webhooks/${hook}/deliveries?since=2026-02-30T10:00&event_type=test`);
    const reversed = await page(`/webhooks/${hook}/deliveries?since=2026-12-02T00:00&until=2026-12-01T00:00`);

    expect(tests).toHaveLength(22);
    expect(deliveryLinks(first)).toEqual(tests.slice(0, 20));
    expect(first).toContain('<option value="test" selected>');
    expect(decode(older)).toContain('event_type=test');
    expect(deliveryLinks(second)).toEqual(tests.slice(20));
    expect(second).toContain('<option value="test" selected>');
    expect(deliveryLinks(onlyBounced)).toEqual(bounced);
    expect(bounced).toHaveLength(1);
    expect(deliveryLinks(future)).toEqual([]);
    expect(future).toContain('value="2999-01-01T00:00"');
    expect(future).toContain('No deliveries match these filters.');
    // A time that is no date: said next to the field, the rest of the filters still applied.
    expect(bad).toMatch(/id="log-since"[^>]*aria-invalid="true" aria-describedby="log-since-error"/);
    expect(bad).toContain('<p class="field-error" id="log-since-error">Enter a date and time');
    expect(deliveryLinks(bad)).toEqual(tests.slice(0, 20));
    expect(reversed).toContain('<p class="field-error" id="log-until-error">“To” must be later than “From”.</p>');

    // The overview's recent deliveries and the email's deliveries, by event type.
    const overview = await page('/?event_type=email.bounced');
    const ofEmail = await page(`/emails/${email}/deliveries?event_type=email.sent`);
    const sent = log.filter((d) => d.event === 'email.sent').map((d) => d.id);
    expect(deliveryLinks(overview)).toEqual(bounced);
    expect(overview).toContain('<option value="email.bounced" selected>');
    expect(deliveryLinks(ofEmail)).toEqual(sent);
    expect(ofEmail).toContain('<option value="email.sent" selected>');
  });

  it('filters the email list by a time window and keeps it (with status) in the form', async () => {
    const { key, accountId } = await rt.newKey();
    const ids: { id: string; created_at: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await rt.call('/emails', {
        method: 'POST',
        key,
        body: JSON.stringify({
          from: 'Acme <hi@acme.test>',
          to: 'success@simulator.amazonses.com',
          subject: `E${i}`,
          html: '<p>x</p>',
        }),
      });
      const { id } = (await res.json()) as { id: string };
      const got = (await (await rt.call(`/emails/${id}`, { key })).json()) as { created_at: string };
      ids.push({ id, created_at: got.created_at });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const cookie = await session(accountId);
    // The window as the form sends it (datetime-local, UTC, to the millisecond): the middle email only.
    const local = (iso: string) => iso.replace(/Z$/, '');
    const path = `/emails?since=${local(ids[1]?.created_at ?? '')}&until=${local(ids[2]?.created_at ?? '')}`;
    const res = await fetch(dash(path), { headers: { cookie } });
    const body = await res.text();

    expect(res.status).toBe(200);
    expect([...body.matchAll(/href="\/v1\/dashboard\/emails\/(email_[0-9a-z]+)"/g)].map((m) => m[1])).toEqual([
      ids[1]?.id,
    ]);
    expect(body).toContain(`value="${local(ids[1]?.created_at ?? '')}"`);
  });
});
