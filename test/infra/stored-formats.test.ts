// Expand/contract per stage (lib/stored-formats.ts): `sendflow:storedFormats` reaches every function of the stage
// as SF_STORED_FORMATS, only when the stage switches something; typos are refused at synth.
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { CONTEXT_STORED_FORMATS, parseStoredFormatsContext } from '../../lib/stored-formats';
import { synthSendflow } from './synth';

type Resources = Record<string, { Properties: { Environment?: { Variables?: Record<string, unknown> } } }>;

/** SF_STORED_FORMATS of each of our functions (those with a service name), by service. */
function storedFormatsOf(template: Template): Record<string, unknown> {
  const functions = Object.values(template.findResources('AWS::Lambda::Function') as Resources);
  return Object.fromEntries(
    functions
      .map((fn) => fn.Properties.Environment?.Variables ?? {})
      .filter((variables) => typeof variables.POWERTOOLS_SERVICE_NAME === 'string')
      .map((variables) => [variables.POWERTOOLS_SERVICE_NAME, variables.SF_STORED_FORMATS]),
  );
}

describe('sendflow:storedFormats', () => {
  it("gives every function of the stage its switches as SF_STORED_FORMATS, and other stages' entries to none", () => {
    // Act
    const { api } = synthSendflow({
      [CONTEXT_STORED_FORMATS]: { prod: { deliveryShards: false }, staging: { deliveryPayloadZ1: false } },
    });

    // Assert
    const variables = storedFormatsOf(api);
    expect(Object.keys(variables).length).toBeGreaterThanOrEqual(7);
    for (const value of Object.values(variables)) expect(value).toBe('deliveryShards=off');
  });

  it('sets nothing when the stage writes the defaults (no entry, or an entry that names them)', () => {
    for (const context of [{}, { [CONTEXT_STORED_FORMATS]: { prod: { deliveryShards: true } } }]) {
      const variables = storedFormatsOf(synthSendflow(context).api);
      for (const value of Object.values(variables)) expect(value).toBeUndefined();
    }
  });

  it('refuses an unknown format, a value that is not a boolean and an entry that is not an object', () => {
    expect(() =>
      parseStoredFormatsContext({ prod: { deliveryShard: false, deliveryPayloadZ1: 'off' }, dev: true }, 'prod'),
    ).toThrow(
      'Context sendflow:storedFormats: prod: unknown stored format deliveryShard (known: deliveryShards, ' +
        'deliveryPayloadZ1, suppressionEvents); prod: deliveryPayloadZ1 must be true or false, got off; dev must be ' +
        'an object such as ' +
        '{"deliveryShards": false}, got true',
    );
    expect(parseStoredFormatsContext('{"prod":{"deliveryPayloadZ1":false}}', 'prod')).toEqual({
      deliveryShards: true,
      deliveryPayloadZ1: false,
      suppressionEvents: true,
    });
  });
});
