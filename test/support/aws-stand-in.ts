// A loopback stand-in for EventBridge and SQS (the AWS destinations' tests): it speaks their JSON protocols
// (AWS JSON 1.1 `AWSEvents.PutEvents`, AWS JSON 1.0 `AmazonSQS.SendMessage`), recomputes every request's SigV4
// signature itself from the credentials it was told to expect (the assumed role's: a request signed with anything
// else is refused as AWS would), records what arrived, and can be told to fail with an AWS error code and request id.
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
}

export interface ReceivedCall {
  /** `PutEvents` or `SendMessage`. */
  readonly action: string;
  readonly service: 'events' | 'sqs';
  readonly region: string;
  readonly body: Record<string, unknown>;
  readonly headers: Readonly<Record<string, string>>;
  /** Whether the recomputed signature equalled the one sent (only valid calls are answered with success). */
  readonly signatureValid: boolean;
  readonly requestId: string;
}

/** How the next calls fail: a service error (status, code) or, for PutEvents, a failed entry in a 200. */
export type Failure =
  | { readonly kind: 'error'; readonly status: number; readonly code: string; readonly message?: string }
  | { readonly kind: 'entry'; readonly code: string; readonly message?: string };

export class AwsStandIn {
  readonly calls: ReceivedCall[] = [];
  private server: Server | null = null;
  private failure: Failure | null = null;
  private failuresLeft = 0;

  constructor(private credentials: StandInCredentials) {}

  /** The credentials valid signatures are made with from now on (a new assumed session). */
  expect(credentials: StandInCredentials): void {
    this.credentials = credentials;
  }

  /** The next `times` calls fail so (Infinity: until told otherwise); `null` ends it. */
  failWith(failure: Failure | null, times = Number.POSITIVE_INFINITY): void {
    this.failure = failure;
    this.failuresLeft = failure ? times : 0;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server?.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(',') : String(value),
      ]),
    );
    const target = headers['x-amz-target'] ?? '';
    const action = target.slice(target.indexOf('.') + 1);
    const service = target.startsWith('AmazonSQS.') ? 'sqs' : 'events';
    const requestId = randomUUID();
    const verdict = verifySigV4(req.method ?? 'POST', req.url ?? '/', headers, raw, this.credentials);
    const call: ReceivedCall = {
      action,
      service,
      region: verdict.region,
      body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
      headers,
      signatureValid: verdict.valid,
      requestId,
    };
    this.calls.push(call);
    const contentType = service === 'sqs' ? 'application/x-amz-json-1.0' : 'application/x-amz-json-1.1';
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': contentType, 'x-amzn-requestid': requestId });
      res.end(JSON.stringify(body));
    };
    if (!verdict.valid) {
      answer(403, { __type: 'SignatureDoesNotMatch', message: verdict.reason });
      return;
    }
    const failure = this.failuresLeft > 0 ? this.failure : null;
    if (failure) this.failuresLeft -= 1;
    if (failure?.kind === 'error') {
      const type = service === 'sqs' ? `com.amazonaws.sqs#${failure.code}` : failure.code;
      answer(failure.status, { __type: type, message: failure.message ?? failure.code });
      return;
    }
    if (action === 'PutEvents') {
      if (failure?.kind === 'entry') {
        answer(200, {
          FailedEntryCount: 1,
          Entries: [{ ErrorCode: failure.code, ErrorMessage: failure.message ?? '' }],
        });
        return;
      }
      answer(200, { FailedEntryCount: 0, Entries: [{ EventId: randomUUID() }] });
      return;
    }
    if (action === 'SendMessage') {
      const md5 = createHash('md5')
        .update(String(call.body.MessageBody ?? ''))
        .digest('hex');
      answer(200, { MessageId: randomUUID(), MD5OfMessageBody: md5 });
      return;
    }
    answer(400, { __type: 'UnknownOperationException', message: `no ${target}` });
  }
}

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');

/**
 * SigV4 as AWS checks it (docs.aws.amazon.com, "Create a signed AWS API request"), written here from the
 * specification rather than taken from the SDK that signed: the canonical request of the signed headers, the
 * string to sign for the credential scope, the key derived from the secret, and the session token present.
 */
export function verifySigV4(
  method: string,
  path: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  credentials: StandInCredentials,
): { valid: boolean; reason: string; region: string } {
  const auth = headers.authorization ?? '';
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return { valid: false, reason: 'no SigV4 Authorization header', region: '' };
  const [, keyId, date, region = '', service = '', signedList = '', signature] = m;
  const fail = (reason: string) => ({ valid: false, reason, region });
  if (keyId !== credentials.accessKeyId) return fail(`signed with access key ${keyId}, not the assumed role's`);
  if (headers['x-amz-security-token'] !== credentials.sessionToken) return fail('no or another session token');
  const amzDate = headers['x-amz-date'] ?? '';
  if (!amzDate.startsWith(date ?? '-')) return fail('x-amz-date outside the credential scope');
  const signed = signedList.split(';');
  for (const required of ['host', 'x-amz-date', 'x-amz-security-token'])
    if (!signed.includes(required)) return fail(`${required} not signed`);
  const canonicalHeaders = signed
    .map((name) => `${name}:${(headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const [pathname = '/', query = ''] = path.split('?');
  const canonicalQuery = query.split('&').filter(Boolean).sort().join('&');
  const canonical = [method, pathname, canonicalQuery, canonicalHeaders, signedList, sha256(body)].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, date ?? ''), region), service), 'aws4_request');
  const expected = createHmac('sha256', key).update(toSign, 'utf8').digest('hex');
  return expected === signature ? { valid: true, reason: '', region } : fail('signature does not match');
}
