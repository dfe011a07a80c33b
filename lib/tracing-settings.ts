// Traces per stage, from CDK context (`sendflow:tracing`): off unless the stage names an OTLP/HTTP endpoint, which
// reaches every function as OTEL_EXPORTER_OTLP_ENDPOINT (OpenTelemetry's own name; docs/deploy-and-operate.md,
// "Traces"). No export headers here: an environment variable is readable by anyone who may read the function's
// configuration, so a backend that wants an API key is reached through a collector that adds it (the ADOT Lambda
// layer's collector on localhost, or one in the account).
import * as z from 'zod';
import { contextObject } from './context-object';

export const CONTEXT_TRACING = 'sendflow:tracing';

export interface TracingSettings {
  /** OTLP/HTTP base URL: spans go to `<endpoint>/v1/traces`. */
  readonly endpoint: string;
  /** The spans' service.name (OTEL_SERVICE_NAME); each function's own service name when omitted. */
  readonly serviceName?: string;
}

const stageTracing = z.strictObject({
  endpoint: z.url({ protocol: /^https?$/ }),
  serviceName: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/)
    .optional(),
});

const EXAMPLE = '{"prod": {"endpoint": "http://localhost:4318"}}';

/** The stage's tracing, or undefined (off) when it has no entry. Every stage's entry is checked. */
export function parseTracing(raw: unknown, stage: string): TracingSettings | undefined {
  if (raw === undefined) return undefined;
  const stages = contextObject(raw, CONTEXT_TRACING, EXAMPLE);
  const problems: string[] = [];
  let mine: TracingSettings | undefined;
  for (const [name, entry] of Object.entries(stages)) {
    const parsed = stageTracing.safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) problems.push(`${[name, ...issue.path].join('.')}: ${issue.message}`);
    } else if (name === stage) mine = parsed.data;
  }
  if (problems.length) throw new Error(`Context ${CONTEXT_TRACING}: ${problems.join('; ')} (e.g. ${EXAMPLE})`);
  return mine;
}

/** The functions' variables for the stage's tracing (none when off). */
export function tracingEnvironment(settings: TracingSettings | undefined): Record<string, string> {
  if (!settings) return {};
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: settings.endpoint,
    ...(settings.serviceName ? { OTEL_SERVICE_NAME: settings.serviceName } : {}),
  };
}
