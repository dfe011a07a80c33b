// Traces per stage (lib/tracing-settings.ts): off by default; `sendflow:tracing` gives every function of the stage
// OTEL_EXPORTER_OTLP_ENDPOINT (and OTEL_SERVICE_NAME when set), other stages' entries none; mistakes fail synth.
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { CONTEXT_TRACING, parseTracing } from '../../lib/tracing-settings';
import { synthSendflow } from './synth';

type Resources = Record<string, { Properties: { Environment?: { Variables?: Record<string, unknown> } } }>;

/** The OTEL_* variables of each of our functions (those with a service name), by service. */
function otelOf(template: Template): Record<string, Record<string, unknown>> {
  const functions = Object.values(template.findResources('AWS::Lambda::Function') as Resources);
  return Object.fromEntries(
    functions
      .map((fn) => fn.Properties.Environment?.Variables ?? {})
      .filter((variables) => typeof variables.POWERTOOLS_SERVICE_NAME === 'string')
      .map((variables) => [
        variables.POWERTOOLS_SERVICE_NAME,
        Object.fromEntries(Object.entries(variables).filter(([name]) => name.startsWith('OTEL_'))),
      ]),
  );
}

describe('sendflow:tracing', () => {
  it("gives every function of the stage its endpoint, other stages' entries to none, and nothing by default", () => {
    // Act
    const on = otelOf(
      synthSendflow({
        [CONTEXT_TRACING]: {
          prod: { endpoint: 'http://localhost:4318', serviceName: 'sendflow-prod' },
          staging: { endpoint: 'https://otlp.example.com' },
        },
      }).api,
    );
    const off = otelOf(synthSendflow({}).api);

    // Assert
    expect(Object.keys(on)).toEqual(
      expect.arrayContaining(['sendflow-api', 'sendflow-delivery', 'sendflow-dispatcher']),
    );
    for (const variables of Object.values(on))
      expect(variables).toEqual({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
        OTEL_SERVICE_NAME: 'sendflow-prod',
      });
    for (const variables of Object.values(off)) expect(variables).toEqual({});
  });

  it('refuses an entry without a URL, with a stray key, or not an object, naming each', () => {
    expect(() =>
      parseTracing(
        { prod: { endpoint: 'not a url' }, dev: { endpoint: 'http://x:4318', headers: 'k=v' }, qa: 1 },
        'prod',
      ),
    ).toThrow(/prod\.endpoint: .*dev: .*headers.*qa: /);
    expect(parseTracing('{"prod":{"endpoint":"http://localhost:4318"}}', 'prod')).toEqual({
      endpoint: 'http://localhost:4318',
    });
    expect(parseTracing({ prod: { endpoint: 'http://localhost:4318' } }, 'dev')).toBeUndefined();
  });
});
