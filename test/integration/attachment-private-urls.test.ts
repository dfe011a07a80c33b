// A `path` is read back to the caller as a downloadable file, so the local runtime does not let it reach private
// or loopback services (as webhooks may, SF_ALLOW_PRIVATE_WEBHOOKS): with the defaults, a `path` to a loopback
// service is refused (422 invalid_attachment) and the service is never contacted. SF_ALLOW_PRIVATE_ATTACHMENT_URLS
// opens loopback for tests, and still refuses the cloud metadata address.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let internal: Server;
let internalUrl = '';
let hits = 0;
beforeAll(async () => {
  internal = createServer((_req, res) => {
    hits += 1;
    res.end('{"AccessKeyId":"ASIA...","SecretAccessKey":"s3cr3t"}');
  });
  await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
  internalUrl = `http://127.0.0.1:${(internal.address() as AddressInfo).port}`;
});
afterAll(async () => {
  internal.closeAllConnections();
  await new Promise<void>((resolve) => internal.close(() => resolve()));
});

const email = (path: string) =>
  JSON.stringify({
    from: 'Acme <hi@acme.test>',
    to: 'bob@example.com',
    subject: 'x',
    html: '<p>x</p>',
    attachments: [{ filename: 'creds.txt', path }],
  });

describe('the local runtime with its defaults (webhooks to loopback allowed)', () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime();
  });
  afterAll(() => rt.stop());

  it('refuses a path to a loopback service, and never contacts it', async () => {
    // Arrange
    const { key } = await rt.newKey();
    hits = 0;

    // Act
    const res = await rt.call('/emails', {
      method: 'POST',
      key,
      body: email(`${internalUrl}/latest/meta-data/iam/security-credentials/role`),
    });

    // Assert
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      code: 'invalid_attachment',
      details: [{ path: 'attachments.0.path', message: 'The URL must use https.' }],
    });
    expect(hits).toBe(0);
  });
});

describe('SF_ALLOW_PRIVATE_ATTACHMENT_URLS=true (tests with a loopback file server)', () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime({ SF_ALLOW_PRIVATE_ATTACHMENT_URLS: 'true' });
  });
  afterAll(() => rt.stop());

  it('fetches from loopback, but still refuses the metadata address', async () => {
    // Arrange
    const { key } = await rt.newKey();

    // Act
    const loopback = await rt.call('/emails', { method: 'POST', key, body: email(`${internalUrl}/f.txt`) });
    const metadata = await rt.call('/emails', {
      method: 'POST',
      key,
      body: email('http://169.254.169.254/latest/meta-data/'),
    });

    // Assert
    expect(loopback.status).toBe(200);
    expect(metadata.status).toBe(422);
    expect(await metadata.json()).toMatchObject({
      details: [
        { path: 'attachments.0.path', message: 'The URL must not point to a link-local or cloud metadata address.' },
      ],
    });
  });
});
