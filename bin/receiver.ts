// `npm run receiver`: a webhook endpoint to try Sendflow with. Listens on 127.0.0.1:4000 (any path), prints
// each delivery (event type, webhook-id, the start of the body) and whether its two signatures verify, and
// answers 200. The signing secret comes from --secret or SF_WEBHOOK_SECRET.
import { createServer, type IncomingMessage } from 'node:http';
import { parseArgs } from 'node:util';
import { checkServiceSignature, checkStandardSignature } from './receiver-signatures';

const USAGE = `usage: npm run receiver -- [--port 4000] [--host 127.0.0.1] [--secret whsec_…]

Receives webhooks on any path and answers 200. The secret (the webhook's signing_secret, or SF_WEBHOOK_SECRET)
lets it check X-Service-Signature and webhook-signature; without it the signatures are not checked.`;

/** Bodies longer than this are cut (the receiver answers 413); Sendflow's payloads are far smaller. */
const MAX_BODY_BYTES = 1024 * 1024;
const SHOWN_BODY_CHARS = 200;

interface Options {
  readonly port: number;
  readonly host: string;
  readonly secret: string | undefined;
}

function options(argv: readonly string[]): Options | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      secret: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  // SF_RECEIVER_PORT: the default a script (the guides' doc-test) sets for a bare `npm run receiver`.
  const port = Number(values.port ?? process.env.SF_RECEIVER_PORT ?? 4000);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be 0 to 65535, not ${values.port}`);
  const secret = values.secret ?? (process.env.SF_WEBHOOK_SECRET || undefined);
  if (secret !== undefined && !secret.startsWith('whsec_')) {
    throw new Error("the secret is the webhook's signing_secret, which starts with whsec_");
  }
  return { port, host: values.host ?? '127.0.0.1', secret };
}

function readBody(request: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : null));
    request.on('error', reject);
  });
}

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** The lines printed for one delivery. */
function describeDelivery(request: IncomingMessage, body: Buffer, secret: string | undefined): string[] {
  const text = body.toString('utf8');
  let type = '(no "type": a chat-format body, or not JSON)';
  try {
    const parsed = JSON.parse(text) as { type?: unknown };
    if (typeof parsed.type === 'string') type = parsed.type;
  } catch {}
  const lines = [
    `${new Date().toISOString()} ${request.method} ${request.url} ${type} webhook-id: ${header(request, 'webhook-id') ?? '(none)'}`,
  ];
  if (secret) {
    const service = checkServiceSignature(secret, body, header(request, 'x-service-signature'));
    const standard = checkStandardSignature(secret, body, {
      id: header(request, 'webhook-id'),
      timestamp: header(request, 'webhook-timestamp'),
      signature: header(request, 'webhook-signature'),
    });
    // During a rotation's grace X-Service-Signature keeps the previous secret while webhook-signature carries one
    // signature per live secret: a receiver given the new secret sees exactly this pair.
    const signatures = header(request, 'webhook-signature')?.trim().split(/\s+/).length ?? 0;
    const grace =
      service === 'INVALID' && standard === 'valid' && signatures > 1
        ? ' (expected during a secret rotation: X-Service-Signature keeps the previous secret until the grace period ends)'
        : '';
    lines.push(`  X-Service-Signature: ${service}   webhook-signature: ${standard}${grace}`);
  } else {
    lines.push('  signatures not checked (no --secret or SF_WEBHOOK_SECRET)');
  }
  lines.push(`  ${text.length > SHOWN_BODY_CHARS ? `${text.slice(0, SHOWN_BODY_CHARS)}…` : text}`);
  return lines;
}

async function main(argv: readonly string[]): Promise<void> {
  const parsed = options(argv);
  if (parsed === 'help') {
    console.log(USAGE);
    return;
  }
  const { port, host, secret } = parsed;
  const server = createServer(async (request, response) => {
    const body = await readBody(request).catch(() => null);
    if (body === null) {
      response.writeHead(413).end();
      return;
    }
    console.log(describeDelivery(request, body, secret).join('\n'));
    response.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  console.log(`Receiving webhooks on http://${host}:${bound}/ (any path); answering 200.`);
  console.log(
    secret
      ? `Checking signatures with the secret whsec_…${secret.slice(-4)}.`
      : 'No secret: signatures are not checked (pass --secret whsec_… or set SF_WEBHOOK_SECRET).',
  );
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const err = error as NodeJS.ErrnoException;
  const message =
    err.code === 'EADDRINUSE'
      ? 'that port is already in use: pass --port with another one (or --port 0 for any free port).'
      : err.message;
  console.error(`receiver: ${message}\n\n${USAGE}`);
  process.exit(err.code === 'EADDRINUSE' ? 1 : 2);
});
