// Every Sendflow function's logging as synthesized (lib/constructs/node-function.ts): JSON format, so Lambda
// filters by level; application lines from INFO (EMF metric lines carry no level and count as INFO: a
// higher level would drop the metrics); Lambda's own START/END/REPORT lines (system level INFO) dropped at WARN.
import { describe, expect, it } from 'vitest';
import { synthSendflow } from './synth';

type Resources = Record<string, { Properties: Record<string, unknown> }>;

describe('function logging', () => {
  it('gives every Sendflow function JSON logs, application level INFO and system level WARN', () => {
    // Arrange
    const { api, data } = synthSendflow();

    // Act
    const functions = [api, data].flatMap((t) =>
      Object.values(t.findResources('AWS::Lambda::Function') as Resources).filter(
        (fn) =>
          (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
            ?.POWERTOOLS_SERVICE_NAME,
      ),
    );

    // Assert: the seven functions of the api stack and the stage guard, all alike.
    expect(functions.length).toBeGreaterThanOrEqual(8);
    for (const fn of functions) {
      expect(fn.Properties.LoggingConfig).toEqual({
        LogFormat: 'JSON',
        ApplicationLogLevel: 'INFO',
        SystemLogLevel: 'WARN',
        LogGroup: { Ref: expect.stringMatching(/Logs/) },
      });
    }
  });
});
