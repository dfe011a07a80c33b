// The email preview's inline images over real HTTP on the local runtime: a `cid:` image of a sent email and of a
// received one shows the attached image itself, inlined as a data: URL of its exact bytes under the preview's
// CSP (which fetches nothing but data: images: the sandboxed frame sends no cookie, so no signed-in route could
// serve it); only raster images whose bytes say so: an SVG (script inside) or HTML named image/png stays a
// placeholder; another account's preview answers 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignInLink } from '../../lambdas/app/dashboard/sign-in';
import type { Mode } from '../../lambdas/domain/api-keys';
import { startTestRuntime, type TestRuntime } from '../support/runtime';
import { RawSmtp } from '../support/smtp-client';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(async () => {
  await rt.stop();
});

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>').toString('base64');
const FAKE_PNG = Buffer.from('<html><script>alert(1)</script></html>').toString('base64');
const dash = (path: string) => `${rt.url}/dashboard${path}`;

async function session(accountId: string, mode: Mode): Promise<string> {
  const { url } = await createSignInLink(rt.services, { accountId, mode, baseUrl: rt.url });
  const token = new URL(url).searchParams.get('token') ?? '';
  const res = await fetch(dash('/sign-in'), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  return (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

/** The sources of the preview's images, in order. */
const sources = (html: string) => [...html.matchAll(/<img[^>]*\bsrc="([^"]*)"/g)].map((m) => m[1] ?? '');

describe('dashboard: inline images in the preview', () => {
  it("shows a sent email's cid: image as its bytes; an SVG or a disguised HTML stays a placeholder", async () => {
    const { key, accountId } = await rt.newKey();
    const sent = await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({
        from: 'Acme <hi@acme.test>',
        to: 'success@simulator.amazonses.com',
        subject: 'Inline',
        html: '<p><img src="cid:logo" alt="Logo"><img src=\'cid:vector\' alt="Vector"><img src=cid:fake alt="Fake"></p>',
        attachments: [
          { filename: 'logo.png', content: PNG, content_id: 'logo' },
          { filename: 'vector.svg', content: SVG, content_id: 'vector', content_type: 'image/svg+xml' },
          { filename: 'fake.png', content: FAKE_PNG, content_id: 'fake', content_type: 'image/png' },
        ],
      }),
    });
    expect(sent.status).toBe(200);
    const { id } = (await sent.json()) as { id: string };
    const cookie = await session(accountId, 'test');
    const stranger = await rt.newKey();

    const res = await fetch(dash(`/emails/${id}/preview`), { headers: { cookie } });
    const body = await res.text();
    const foreign = await fetch(dash(`/emails/${id}/preview`), {
      headers: { cookie: await session(stranger.accountId, 'test') },
    });

    expect(res.status).toBe(200);
    const [logo, vector, fake] = sources(body);
    expect(logo).toBe(`data:image/png;base64,${PNG}`);
    expect(decodeURIComponent(vector ?? '')).toContain('Inline image');
    expect(decodeURIComponent(vector ?? '')).toContain('vector.svg');
    expect(decodeURIComponent(fake ?? '')).toContain('fake.png');
    expect(body).not.toContain(SVG);
    expect(body).not.toContain(FAKE_PNG);
    expect(res.headers.get('content-security-policy')).toContain('img-src data:;');
    expect(res.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(foreign.status).toBe(404);
  });

  it("shows a received email's cid: image as its bytes", async () => {
    const { key, accountId } = await rt.newKey({ mode: 'live' });
    const post = (path: string, body: unknown) => rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });
    const domain = (await (
      await post('/domains', { name: 'inline.acme.example', capabilities: { receiving: 'enabled' } })
    ).json()) as { id: string };
    await post(`/domains/${domain.id}/verify`, {});
    const { client } = await RawSmtp.open(rt.smtpPort);
    await client.send(
      'ada@sender.example',
      ['help@inline.acme.example'],
      [
        'From: Ada <ada@sender.example>',
        'Subject: Logo',
        'Content-Type: multipart/related; boundary="r"',
        '',
        '--r',
        'Content-Type: text/html',
        '',
        '<p><img src="cid:logo@sender" alt="Logo"></p>',
        '--r',
        'Content-Type: image/png; name="logo.png"',
        'Content-Transfer-Encoding: base64',
        'Content-ID: <logo@sender>',
        'Content-Disposition: inline; filename="logo.png"',
        '',
        PNG,
        '--r--',
        '',
      ].join('\r\n'),
    );
    client.close();
    await rt.inbound.idle();
    const listed = (await (await rt.call('/emails/receiving', { key })).json()) as { data: { id: string }[] };
    const id = listed.data[0]?.id ?? '';
    const cookie = await session(accountId, 'live');

    const res = await fetch(dash(`/received/${id}/preview`), { headers: { cookie } });
    const body = await res.text();

    expect(res.status).toBe(200);
    expect(sources(body)).toEqual([`data:image/png;base64,${PNG}`]);
    expect(res.headers.get('content-security-policy')).toMatch(/^sandbox;.*img-src data:;/);
  });
});
