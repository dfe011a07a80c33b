// The webhook sender: one POST per attempt with node:http(s), a hard deadline, no redirects followed, the
// response read up to a bound, and every connection made through the guarded lookup. Each outcome carries its
// error class and the time of each phase (DNS, TCP connect, TLS, time to first byte). Node's own client rather
// than undici: the same behaviour, and half a megabyte less in every Lambda bundle that attempts deliveries.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { OutboundRequest, WebhookSender } from '../../app/webhooks/ports';
import { checkWebhookUrl } from '../../domain/webhooks/address-guard';
import { type AttemptOutcome, type AttemptTimings, boundHeaders, excerpt } from '../../domain/webhooks/delivery';
import { ATTEMPT_ERRORS, errorClassOfStatus } from '../../domain/webhooks/error-class';
import { describeFailure } from './attempt-failure';
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
    const phases = new Phases(started);
    const done = (
      fields: Pick<AttemptOutcome, 'statusCode' | 'error' | 'errorClass' | 'response' | 'responseHeaders'>,
    ): AttemptOutcome => ({
      at,
      durationMs: Math.round(performance.now() - started),
      ...fields,
      timings: phases.timings(),
    });
    const check = checkWebhookUrl(outbound.url, { allowPrivate: this.options.allowPrivate });
    if (!check.ok) {
      const error = ATTEMPT_ERRORS.urlRefused(check.reason);
      return done({ statusCode: null, error, errorClass: 'blocked_address', response: '' });
    }

    // One deadline for connecting, the headers and the body alike.
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const url = new URL(outbound.url);
    try {
      const res = await this.post(url, outbound, signal, phases);
      const body = await readBounded(res);
      const status = res.statusCode ?? 0;
      const errorClass = errorClassOfStatus(status);
      let error: string | null = null;
      if (errorClass === 'redirect') {
        const location = res.headers.location;
        error = ATTEMPT_ERRORS.redirectNotFollowed(status, location ? String(location) : null);
      } else if (errorClass !== null) {
        error = ATTEMPT_ERRORS.httpStatus(status);
      }
      return done({
        statusCode: status,
        error,
        errorClass,
        response: excerpt(body),
        responseHeaders: answerHeaders(res),
      });
    } catch (caught) {
      const failure = signal.aborted
        ? { errorClass: 'timeout' as const, error: ATTEMPT_ERRORS.timedOut(this.options.timeoutMs) }
        : describeFailure(caught, url.hostname);
      return done({ statusCode: null, ...failure, response: '' });
    }
  }

  async close(): Promise<void> {
    this.http.destroy();
    this.https.destroy();
  }

  /** The response once its headers arrived; a redirect is a response like any other (never followed). */
  private post(url: URL, outbound: OutboundRequest, signal: AbortSignal, phases: Phases): Promise<IncomingMessage> {
    const secure = url.protocol === 'https:';
    const body = Buffer.from(outbound.body, 'utf8');
    return new Promise((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: outbound.method ?? 'POST',
          headers: { ...outbound.headers, 'Content-Length': String(body.byteLength) },
          agent: secure ? this.https : this.http,
          lookup: timedLookup(this.lookup, phases),
          signal,
        },
        (res) => {
          phases.mark('headers');
          resolve(res);
        },
      );
      req.once('socket', (socket) => {
        // A kept-alive socket was resolved, connected and secured for an earlier attempt: none of that now.
        if (req.reusedSocket || !socket.connecting) return;
        socket.once('connect', () => phases.mark('connect'));
        if (secure) socket.once('secureConnect', () => phases.mark('secureConnect'));
      });
      req.once('finish', () => phases.mark('written'));
      req.on('error', reject);
      req.end(body);
    });
  }
}

/**
 * The lookup, marking when it answered. Rather than the socket's `lookup` event: a lookup that answers within
 * the same tick (a cached or scripted answer) would end before the request's `socket` event lets us listen. Never
 * called for an IP literal or a reused socket, so those have no DNS phase.
 */
function timedLookup(lookup: LookupFunction, phases: Phases): LookupFunction {
  return (hostname, options, callback) =>
    lookup(hostname, options, ((error: NodeJS.ErrnoException | null, ...rest: unknown[]) => {
      if (!error) phases.mark('lookup');
      (callback as (...args: unknown[]) => void)(error, ...rest);
    }) as typeof callback);
}

type Phase = 'lookup' | 'connect' | 'secureConnect' | 'written' | 'headers';

/** When each phase of one request ended (performance.now()), and the timings they make. */
class Phases {
  private readonly marks = new Map<Phase, number>();

  constructor(private readonly started: number) {}

  mark(phase: Phase): void {
    if (!this.marks.has(phase)) this.marks.set(phase, performance.now());
  }

  timings(): AttemptTimings {
    const lookup = this.marks.get('lookup');
    const connect = this.marks.get('connect');
    const secure = this.marks.get('secureConnect');
    const written = this.marks.get('written');
    const headers = this.marks.get('headers');
    const span = (from: number | undefined, to: number | undefined) =>
      from === undefined || to === undefined ? null : Math.max(0, Math.round(to - from));
    return {
      dnsMs: span(this.started, lookup),
      connectMs: span(lookup ?? this.started, connect),
      tlsMs: span(connect, secure),
      // Headers before the body was all written (an early answer): counted from the start of the request.
      ttfbMs: span(
        written !== undefined && headers !== undefined && written <= headers ? written : this.started,
        headers,
      ),
    };
  }
}

/** The answer's headers as received (raw pairs keep their order), bounded for the attempt log. */
function answerHeaders(res: IncomingMessage): Record<string, string> {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
    pairs.push([res.rawHeaders[i] ?? '', res.rawHeaders[i + 1] ?? '']);
  return boundHeaders(pairs);
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
