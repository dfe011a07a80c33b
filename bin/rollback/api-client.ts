// check:rollback's view of a running release: its public /v1 API over HTTP with an API key, as a customer sees
// it. A 429 waits for its Retry-After and asks again; anything else is returned as it came.
export interface ApiAnswer {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body whose shape each check reads (and reports when it differs)
  readonly body: any;
}

/** The fixed caller context of the workload's requests (W3C traceparent, sampled). */
const ROLLBACK_TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly key: string,
  ) {}

  withKey(key: string): ApiClient {
    return new ApiClient(this.baseUrl, key);
  }

  get(path: string): Promise<ApiAnswer> {
    return this.call('GET', path);
  }

  post(path: string, body?: unknown): Promise<ApiAnswer> {
    return this.call('POST', path, body);
  }

  patch(path: string, body: unknown): Promise<ApiAnswer> {
    return this.call('PATCH', path, body);
  }

  /** GET of a URL the API handed out (a download link): its bytes. */
  async download(url: string): Promise<{ status: number; bytes: Buffer }> {
    const response = await fetch(url, { signal: AbortSignal.timeout(20_000) });
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
  }

  private async call(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    for (let tries = 0; ; tries++) {
      const response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.key}`,
          // A caller's trace context (issue 32): every email, event, job and delivery row the workload makes
          // carries the compact `trace` field, which the other release must read past.
          traceparent: ROLLBACK_TRACEPARENT,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      if (response.status === 429 && tries < 10) {
        await sleep(Math.max(1, Number(response.headers.get('retry-after') ?? 1)) * 1000);
        continue;
      }
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON: the text itself.
      }
      return { status: response.status, body: parsed };
    }
  }
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
