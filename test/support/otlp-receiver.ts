// A local OTLP/HTTP traces receiver on loopback (port 0): takes what an OpenTelemetry exporter POSTs to
// /v1/traces (OTLP's JSON encoding), flattens it into spans, and can be told to fail (500) or hang.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly serviceName: string;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received (whatever they were answered). */
  readonly requests: number;
  answer(kind: 'ok' | 'fail' | 'hang'): void;
  /** Resolves once `predicate` holds for the spans received, or throws after `timeoutMs`. */
  waitFor(predicate: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  status?: { code?: number };
}
interface OtlpBody {
  resourceSpans?: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

const plainValue = (value: OtlpValue): string | number | boolean =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue ?? ''));

const attributesOf = (list: readonly OtlpAttribute[] = []) =>
  Object.fromEntries(list.map((attribute) => [attribute.key, plainValue(attribute.value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let mode: 'ok' | 'fail' | 'hang' = 'ok';
  let requests = 0;
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests += 1;
      if (mode === 'hang') return void hanging.add(res);
      if (mode === 'fail' || req.url !== '/v1/traces') return void res.writeHead(500).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpBody;
      for (const resource of body.resourceSpans ?? []) {
        const serviceName = String(attributesOf(resource.resource?.attributes)['service.name'] ?? '');
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              statusCode: span.status?.code ?? 0,
              serviceName,
            });
          }
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    get requests() {
      return requests;
    },
    answer(kind) {
      mode = kind;
    },
    async waitFor(predicate, timeoutMs = 15_000) {
      const started = Date.now();
      while (!predicate(spans)) {
        if (Date.now() - started > timeoutMs)
          throw new Error(`OTLP receiver: ${spans.length} spans, not the ones expected`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return [...spans];
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
