// The dashboard's received-email pages over real HTTP on the local runtime: the list (newest first) and one
// email (sender, recipients, text, headers, download links of the raw message and the attachment), the HTML
// shown only in a frame with `sandbox` whose source is served under a CSP sandbox that runs no script and fetches
// nothing; another account's email is not shown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignInLink } from '../../lambdas/app/dashboard/sign-in';
import { startTestRuntime, type TestRuntime } from '../support/runtime';
import { RawSmtp } from '../support/smtp-client';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(async () => {
  await rt.stop();
});

const dash = (path = '') => `${rt.url}/dashboard${path}`;

/** A live-mode dashboard session of the account (as its sign-in link's POST makes it). */
async function session(accountId: string): Promise<string> {
  const { url } = await createSignInLink(rt.services, { accountId, mode: 'live', baseUrl: rt.url });
  const token = new URL(url).searchParams.get('token') ?? '';
  const res = await fetch(dash('/sign-in'), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
  return (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

describe('dashboard: received emails', () => {
  it('lists them and shows one with its HTML sandboxed, text, headers and download links', async () => {
    const { key, accountId } = await rt.newKey({ mode: 'live' });
    const post = (path: string, body: unknown) => rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });
    const domain = (await (
      await post('/domains', { name: 'dash.acme.example', capabilities: { receiving: 'enabled' } })
    ).json()) as { id: string };
    await post(`/domains/${domain.id}/verify`, {});
    const { client } = await RawSmtp.open(rt.smtpPort);
    await client.send(
      'ada@sender.example',
      ['help@dash.acme.example'],
      [
        'From: Ada <ada@sender.example>',
        'Subject: <b>Dashboard</b> check',
        'X-Custom: kept',
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b',
        'Content-Type: text/html',
        '',
        '<p id="x">Hi</p><script>document.title="pwned"</script><img src="https://tracker.example/p.gif">',
        '--b',
        'Content-Type: text/plain',
        '',
        'Hi in text',
        '--b',
        'Content-Type: application/pdf; name="a.pdf"',
        'Content-Disposition: attachment; filename="a.pdf"',
        '',
        'pdf',
        '--b--',
        '',
      ].join('\r\n'),
    );
    client.close();
    await rt.inbound.idle();
    const cookie = await session(accountId);

    const list = await fetch(dash('/received'), { headers: { cookie } });
    const listPage = await list.text();
    const id = /href="\/v1\/dashboard\/received\/(rcv_[0-9a-z]+)"/.exec(listPage)?.[1] ?? '';
    const detail = await (await fetch(dash(`/received/${id}`), { headers: { cookie } })).text();
    const preview = await fetch(dash(`/received/${id}/preview`), { headers: { cookie } });
    const stranger = await rt.newKey({ mode: 'live' });
    const foreign = await fetch(dash(`/received/${id}`), { headers: { cookie: await session(stranger.accountId) } });

    expect(list.status).toBe(200);
    expect(listPage).toContain('&lt;b&gt;Dashboard&lt;/b&gt; check');
    // Addresses may wrap only at their boundaries (a <wbr> after @ and each dot).
    expect(listPage.replaceAll('<wbr>', '')).toContain('help@dash.acme.example');
    expect(id).toMatch(/^rcv_/);
    expect(detail).toContain('Hi in text');
    expect(detail).toContain('x-custom');
    expect(detail).toMatch(
      /<iframe class="preview" sandbox="" [^>]*src="\/v1\/dashboard\/received\/rcv_[0-9a-z]+\/preview"/,
    );
    expect(detail).not.toContain('<script>document.title');
    expect(detail).toMatch(/href="http:\/\/127\.0\.0\.1:\d+\/v1\/files\/[^"]+"[^>]*>a\.pdf<\/a>/);
    expect(detail).toContain('Download (.eml)');
    expect(preview.status).toBe(200);
    expect(preview.headers.get('content-security-policy')).toMatch(/^sandbox; default-src 'none'/);
    expect(await preview.text()).toContain('<script>document.title="pwned"</script>');
    expect(foreign.status).toBe(404);
  });

  it('shows a partial email as such, with the notes saying what is only in the raw message', async () => {
    const { key, accountId } = await rt.newKey({ mode: 'live' });
    const post = (path: string, body: unknown) => rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });
    const domain = (await (
      await post('/domains', { name: 'partial.acme.example', capabilities: { receiving: 'enabled' } })
    ).json()) as { id: string };
    await post(`/domains/${domain.id}/verify`, {});
    const { client } = await RawSmtp.open(rt.smtpPort);
    // 150 addresses in To: 100 are listed, 50 left out and counted.
    const to = Array.from({ length: 150 }, (_, i) => `r${i}@partial.acme.example`).join(', ');
    await client.send(
      'ada@sender.example',
      ['help@partial.acme.example'],
      `From: a@x.example\r\nTo: ${to}\r\nSubject: Crowd\r\n\r\nhi\r\n`,
    );
    client.close();
    await rt.inbound.idle();
    const cookie = await session(accountId);

    const listPage = await (await fetch(dash('/received'), { headers: { cookie } })).text();
    const id = /href="\/v1\/dashboard\/received\/(rcv_[0-9a-z]+)"/.exec(listPage)?.[1] ?? '';
    const detail = await (await fetch(dash(`/received/${id}`), { headers: { cookie } })).text();

    expect(listPage).toContain('Crowd <span class="badge tone-warn status-partial">partial</span>');
    expect(detail).toMatch(/<section aria-labelledby="notes-h" id="received-notes"><h2 id="notes-h">Not complete/);
    expect(detail).toContain('Too long to list whole, left out (see omitted): 50 to; the raw message has them all.');
  });
});
