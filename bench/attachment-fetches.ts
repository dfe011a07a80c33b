// How many outbound GETs one batch send makes for its attachments' `path`s, and how long it takes: a batch of
// 100 emails, each naming the same 20 URLs on a loopback file server (the review's worst case for issue 19).
// Run: npm run bench:attachment-fetches (docs/benchmarks.md, "Attachment `path` fetches per request (`bench:attachment-fetches`)").
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestRuntime } from '../test/support/runtime';

const EMAILS = 100;
const PATHS = 20;

let hits = 0;
const files = createServer((_req, res) => {
  hits += 1;
  res.writeHead(200, { 'Content-Type': 'text/plain' }).end('x'.repeat(1000));
});
await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
// Loopback allowed for `path` (SF_ALLOW_PRIVATE_ATTACHMENT_URLS; before it existed, SF_ALLOW_PRIVATE_WEBHOOKS did).
const rt = await startTestRuntime({
  SF_MAX_SEND_BODY_BYTES: String(4 * 1024 * 1024),
  SF_ALLOW_PRIVATE_ATTACHMENT_URLS: 'true',
  SF_ALLOW_PRIVATE_WEBHOOKS: 'true',
});
try {
  const { key } = await rt.newKey();
  const email = {
    from: 'Acme <hi@acme.test>',
    to: 'bob@example.com',
    subject: 'x',
    html: '<p>x</p>',
    attachments: Array.from({ length: PATHS }, (_, i) => ({ filename: `f${i}.txt`, path: `${base}/f${i}` })),
  };
  const started = performance.now();
  const res = await rt.call('/emails/batch', {
    method: 'POST',
    key,
    body: JSON.stringify(Array.from({ length: EMAILS }, () => email)),
  });
  const ms = Math.round(performance.now() - started);
  const answered = (await res.text()).slice(0, 120);
  console.log(
    JSON.stringify({ emails: EMAILS, pathsPerEmail: PATHS, status: res.status, outboundGets: hits, ms, answered }),
  );
} finally {
  await rt.stop();
  files.closeAllConnections();
  await new Promise<void>((resolve) => files.close(() => resolve()));
}
