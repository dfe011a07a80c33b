// The webhook sender: one POST per attempt with undici, a hard deadline, no redirects followed, the response
// read up to a bound, and every connection made through the guarded lookup.
import { Agent, request } from 'undici';
import type { OutboundRequest, WebhookSender } from '../../app/webhooks/ports';
import { checkWebhookUrl } from '../../domain/webhooks/address-guard';
import { type AttemptOutcome, excerpt } from '../../domain/webhooks/delivery';
import { ATTEMPT_ERRORS } from '../../domain/webhooks/error-class';
import { guardedLookup } from './guarded-lookup';

const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SenderOptions {
  /** Answer time-out (spec: 10 s). */
  readonly timeoutMs: number;
  /** Local runtime only: http and private addresses allowed. */
  readonly allowPrivate: boolean;
  readonly now?: () => number;
}

export class HttpWebhookSender implements WebhookSender {
  private readonly agent: Agent;
  private readonly now: () => number;

  constructor(private readonly options: SenderOptions) {
    this.now = options.now ?? Date.now;
    this.agent = new Agent({
      connect: { lookup: guardedLookup(options.allowPrivate), timeout: options.timeoutMs },
      keepAliveTimeout: 4_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
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

    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const res = await request(outbound.url, {
        method: 'POST',
        body: outbound.body,
        headers: outbound.headers,
        dispatcher: this.agent,
        signal,
      });
      const body = await readBounded(res.body);
      const status = res.statusCode;
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
    await this.agent.close();
  }
}

async function readBounded(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
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
