// The webhook sender: one POST per attempt with node:http(s), a hard deadline, no redirects followed, the
// response read up to a bound, and every connection made through the guarded lookup. Node's own client rather
// than undici: the same behaviour, and half a megabyte less in every Lambda bundle that attempts deliveries.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { OutboundRequest, WebhookSender } from '../../app/webhooks/ports';
import { checkWebhookUrl } from '../../domain/webhooks/address-guard';
import { type AttemptOutcome, excerpt } from '../../domain/webhooks/delivery';
import { ATTEMPT_ERRORS } from '../../domain/webhooks/error-class';
import { guardedLookup } from './guarded-lookup';

const MAX_RESPONSE_BYTES = 64 * 1024;
const IDLE_SOCKET_MS = 4_000;

export interface SenderOptions {
  /** Answer time-out (spec: 10 s). */
  readonly timeoutMs: number;
  /** Local runtime only: http and private addresses allowed. */
  readonly allowPrivate: boolean;
  readonly now?: () => number;
}

export class HttpWebhookSender implements WebhookSender {
  // Keep-alive: repeated attempts to one endpoint reuse the connection (made through the guarded lookup). An
  // idle socket is closed after 4 s (the agents' `timeout` acts on idle sockets only; the deadline below bounds
  // a request): shorter than servers' usual 5 s, so we never reuse a socket the endpoint is closing.
  private readonly http = new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  private readonly https = new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  private readonly lookup: LookupFunction;
  private readonly now: () => number;

  constructor(private readonly options: SenderOptions) {
    this.now = options.now ?? Date.now;
    this.lookup = guardedLookup(options.allowPrivate);
  }

  async send(outbound: OutboundRequest): Promise<AttemptOutcome> {
    const at = this.now();
    const started = performance.now();
    const done = (fields: Omit<AttemptOutcome, 'at' | 'durationMs'>): AttemptOutcome => ({
      at,
      durationMs: Math.round(performance.now() - started),
      ...fields,
    });
    const check = checkWebhookUrl(outbound.url, { allowPrivate: this.options.allowPrivate });
    if (!check.ok) return done({ statusCode: null, error: ATTEMPT_ERRORS.urlRefused(check.reason), response: '' });

    // One deadline for connecting, the headers and the body alike.
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const res = await this.post(outbound, signal);
      const body = await readBounded(res);
      const status = res.statusCode ?? 0;
      let error: string | null = null;
      if (status >= 300 && status < 400) {
        const location = res.headers.location;
        error = `redirect not followed (HTTP ${status}${location ? ` to ${String(location)}` : ''})`;
      } else if (status < 200 || status >= 300) {
        error = `HTTP ${status}`;
      }
      return done({ statusCode: status, error, response: excerpt(body) });
    } catch (caught) {
      const message = signal.aborted ? ATTEMPT_ERRORS.timedOut(this.options.timeoutMs) : describe(caught);
      return done({ statusCode: null, error: message, response: '' });
    }
  }

  async close(): Promise<void> {
    this.http.destroy();
    this.https.destroy();
  }

  /** The response once its headers arrived; a redirect is a response like any other (never followed). */
  private post(outbound: OutboundRequest, signal: AbortSignal): Promise<IncomingMessage> {
    const url = new URL(outbound.url);
    const secure = url.protocol === 'https:';
    const body = Buffer.from(outbound.body, 'utf8');
    return new Promise((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: 'POST',
          headers: { ...outbound.headers, 'Content-Length': String(body.byteLength) },
          agent: secure ? this.https : this.http,
          lookup: this.lookup,
          signal,
        },
        resolve,
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}

async function readBounded(body: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_RESPONSE_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8');
}

function describe(error: unknown): string {
  let current = error as (Error & { code?: string }) | undefined;
  while (current?.cause instanceof Error) current = current.cause as Error & { code?: string };
  if (!current) return 'request failed';
  if (current.code === 'ENOTFOUND' || current.code === 'EAI_AGAIN') return ATTEMPT_ERRORS.dnsFailed(current.code);
  if (current.code === 'ECONNREFUSED') return ATTEMPT_ERRORS.connectionRefused;
  if (current.code === 'ECONNRESET' || current.code === 'UND_ERR_SOCKET') return ATTEMPT_ERRORS.connectionClosed;
  return current.message || current.code || 'request failed';
}
