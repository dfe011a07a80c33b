// Hostile inbound mail for the benches (bench:inbound-hostile, bench:attackers): a receiving domain made for a
// tenant, and a message of many tiny MIME parts sent to it over SMTP from a thread of its own.
import { Worker } from 'node:worker_threads';

/** Makes `domain` a verified receiving domain through `call` (a tenant's key; the runtime verifies at once). */
export async function makeReceivingDomain(
  call: (path: string, init: { method: string; body?: string }) => Promise<Response>,
  domain: string,
): Promise<void> {
  const created = await call('/domains', {
    method: 'POST',
    body: JSON.stringify({ name: domain, capabilities: { receiving: 'enabled' } }),
  });
  if (created.status !== 201 && created.status !== 200) throw new Error(`domain: HTTP ${created.status}`);
  const { id } = (await created.json()) as { id: string };
  const verified = await call(`/domains/${id}/verify`, { method: 'POST' });
  if (!verified.ok) throw new Error(`verify: HTTP ${verified.status}`);
}

/**
 * Sends `domain` a message of `parts` parts over SMTP from a thread of its own: building and sending 29 MB
 * must not delay this thread's probes (an open-loop probe late for our own reasons would be counted as B's).
 */
export function sendHostileMessage(port: number, parts: number, domain: string): Promise<string> {
  const worker = new Worker(ATTACKER, { eval: true, workerData: { port, parts, domain } });
  return new Promise((resolve, reject) => {
    worker.once('message', (text: string) => resolve(text));
    worker.once('error', reject);
  });
}

/** The attacker's thread: plain JavaScript (no transpiler in an eval'd worker), one SMTP transaction. */
const ATTACKER = `
const { workerData, parentPort } = require('node:worker_threads');
const { connect } = require('node:net');
const { port, parts, domain } = workerData;
const head = 'From: A <a@attacker.example>\\r\\nTo: inbox@' + domain + '\\r\\nSubject: ' + parts + ' parts\\r\\n' +
  'MIME-Version: 1.0\\r\\nContent-Type: multipart/mixed; boundary="b"\\r\\n\\r\\n';
const body = Buffer.concat([Buffer.from(head), Buffer.from('--b\\r\\nContent-Type: text/x\\r\\n\\r\\nx\\r\\n'.repeat(parts)),
  Buffer.from('--b--\\r\\n.\\r\\n')]);
const socket = connect(port, '127.0.0.1');
let buffer = '';
const steps = ['EHLO attacker.example', 'MAIL FROM:<a@attacker.example>', 'RCPT TO:<inbox@' + domain + '>', 'DATA', body];
let started = 0;
socket.on('data', (chunk) => {
  buffer += chunk.toString('latin1');
  let match;
  while ((match = /^(?:\\d{3}-[^\\r\\n]*\\r\\n)*(\\d{3}) ([^\\r\\n]*)\\r\\n/.exec(buffer))) {
    buffer = buffer.slice(match[0].length);
    const step = steps.shift();
    if (step === undefined) {
      parentPort.postMessage('SMTP ' + match[1] + ' ' + match[2].slice(0, 40) + ' in ' + Math.round(performance.now() - started) + ' ms');
      socket.end('QUIT\\r\\n');
      return;
    }
    if (typeof step !== 'string') started = performance.now();
    socket.write(typeof step === 'string' ? step + '\\r\\n' : step);
  }
});
socket.on('error', (error) => parentPort.postMessage('SMTP connection: ' + error.message));
`;
