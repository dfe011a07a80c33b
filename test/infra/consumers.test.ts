// Template assertions for the consumer limits set in CDK context (lib/consumers.ts): each SQS event source's
// MaximumConcurrency (`sendflow:maxConcurrency`, defaults from the manifest) and the send worker's share of the
// SES account's sending rate (`sendflow:sesMaxSendRate`), as cdk.json or `-c` gives them.
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { queues } from '../../lambdas/manifest';
import { CONTEXT_MAX_CONCURRENCY, CONTEXT_SES_MAX_SEND_RATE } from '../../lib/app';
import { DEAD_LETTER_CONCURRENCY } from '../../lib/constructs/delivery-pipeline';
import { PROVIDER_EVENTS_QUEUE, sendRateShare } from '../../lib/constructs/email-pipeline';
import { DEFAULT_MAX_CONCURRENCY } from '../../lib/consumers';
import { synthSendflow, UNMONITORED_TEST_STAGES } from './synth';

type Resource = { Properties: Record<string, unknown> };

/** The queue each event source reads, by its construct path, so a mapping is found by consumer name. */
const QUEUE_IDS = {
  events: /^DeliveryPipelineEventsQueue/,
  deliveries: /^DeliveryPipelineDeliveriesQueue/,
  deliveriesBypass: /^DeliveryPipelineDeliveriesBypassQueue/,
  slowDeliveries: /^DeliveryPipelineSlowDeliveriesQueue/,
  sends: /^EmailPipelineSendsQueue/,
  providerEvents: /^EmailPipelineProviderEventsQueue/,
  deliveriesDlq: /^DeliveryPipelineDeliveriesDlq/,
  slowDeliveriesDlq: /^DeliveryPipelineSlowDeliveriesDlq/,
} as const;

/** The deliveries DLQs' consumer (the delivery worker): Lambda's least MaximumConcurrency, not configurable. */
const DLQ_CONSUMERS = { deliveriesDlq: DEAD_LETTER_CONCURRENCY, slowDeliveriesDlq: DEAD_LETTER_CONCURRENCY };

/** MaximumConcurrency per consumer, as synthesized. */
function maxConcurrencyOf(api: Template): Record<string, number> {
  const mappings = Object.values(api.findResources('AWS::Lambda::EventSourceMapping')) as Resource[];
  expect(mappings).toHaveLength(Object.keys(QUEUE_IDS).length);
  const found: Record<string, number> = {};
  for (const mapping of mappings) {
    const [queueId] = (mapping.Properties.EventSourceArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
    const name = Object.entries(QUEUE_IDS).find(([, id]) => id.test(queueId))?.[0];
    if (!name) throw new Error(`event source on an unexpected queue ${queueId}`);
    found[name] = (mapping.Properties.ScalingConfig as { MaximumConcurrency: number }).MaximumConcurrency;
  }
  return found;
}

function senderVariables(api: Template): Record<string, unknown> {
  const functions = api.findResources('AWS::Lambda::Function') as Record<string, Resource>;
  const [, sender] = Object.entries(functions).find(([id]) => id.startsWith('EmailPipelineSender')) ?? [];
  if (!sender) throw new Error('no send worker');
  return (sender.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
}

describe('sendflow:maxConcurrency', () => {
  it('defaults to the manifest (and the provider-events queue) on every SQS event source', () => {
    // Act
    const { api } = synthSendflow();

    // Assert
    expect(maxConcurrencyOf(api)).toEqual({
      events: queues.events.maxConcurrency,
      deliveries: queues.deliveries.maxConcurrency,
      // The shared lane's bypass: the deliveries queue's settings.
      deliveriesBypass: queues.deliveries.maxConcurrency,
      slowDeliveries: queues.slowDeliveries.maxConcurrency,
      sends: queues.sends.maxConcurrency,
      providerEvents: PROVIDER_EVENTS_QUEUE.maxConcurrency,
      ...DLQ_CONSUMERS,
    });
  });

  it('takes a partial object from cdk.json: the consumers named change, the others keep their defaults', () => {
    // Act
    const { api } = synthSendflow({ [CONTEXT_MAX_CONCURRENCY]: { deliveries: 20, providerEvents: 3 } });

    // Assert
    expect(maxConcurrencyOf(api)).toEqual({
      ...DEFAULT_MAX_CONCURRENCY,
      ...DLQ_CONSUMERS,
      deliveries: 20,
      providerEvents: 3,
    });
  });

  it('takes the JSON string `-c sendflow:maxConcurrency=...` gives, bounds included', () => {
    // Act
    const { api } = synthSendflow({
      [CONTEXT_MAX_CONCURRENCY]: '{"events": 2, "slowDeliveries": 1000, "sends": 4}',
      // 1,000 executions for one consumer fit only in a larger account quota (lib/concurrency.ts).
      'sendflow:lambdaConcurrency': '{"accountQuota": 2000}',
    });

    // Assert
    expect(maxConcurrencyOf(api)).toEqual({
      ...DEFAULT_MAX_CONCURRENCY,
      ...DLQ_CONSUMERS,
      events: 2,
      slowDeliveries: 1000,
      sends: 4,
    });
  });

  it.each([
    [{ deliveries: 1 }, /deliveries must be an integer from 2 to 1000, got 1/],
    [{ deliveries: 1001 }, /deliveries must be an integer from 2 to 1000, got 1001/],
    [{ sends: 2.5 }, /sends must be an integer from 2 to 1000, got 2.5/],
    [{ events: '10' }, /events must be an integer from 2 to 1000, got "10"/],
    [{ sends: null }, /sends must be an integer/],
    [
      { delivery: 10 },
      /unknown consumer "delivery" \(known: events, deliveries, deliveriesBypass, slowDeliveries, sends, providerEvents\)/,
    ],
    ['{"deliveries": 20', /sendflow:maxConcurrency must be a JSON object/],
    ['20', /sendflow:maxConcurrency must be an object/],
    [[10], /sendflow:maxConcurrency must be an object/],
  ])('refuses %j with a clear error', (value, message) => {
    expect(() => synthSendflow({ [CONTEXT_MAX_CONCURRENCY]: value })).toThrow(message);
  });

  it('reports every problem at once', () => {
    expect(() => synthSendflow({ [CONTEXT_MAX_CONCURRENCY]: { deliveries: 0, lanes: 3 } })).toThrow(
      /deliveries must be .*; unknown consumer "lanes"/,
    );
  });
});

describe('sendflow:sesMaxSendRate', () => {
  it("gives the send worker its share of SES's starting rate by default: 14/s over 10 invocations", () => {
    // Act
    const { api } = synthSendflow();

    // Assert
    expect(senderVariables(api).SF_SES_MAX_SEND_RATE).toBe('1.4');
  });

  it('divides the configured rate by the sends consumer’s configured MaximumConcurrency', () => {
    // Act
    const { api } = synthSendflow({
      [CONTEXT_SES_MAX_SEND_RATE]: '50',
      [CONTEXT_MAX_CONCURRENCY]: { sends: 20 },
    });

    // Assert
    expect(senderVariables(api).SF_SES_MAX_SEND_RATE).toBe('2.5');
  });

  it('no other function is paced: only the send worker calls SendEmail', () => {
    // Act
    const { api } = synthSendflow();

    // Assert
    const functions = api.findResources('AWS::Lambda::Function') as Record<string, Resource>;
    const paced = Object.entries(functions).filter(([, fn]) =>
      JSON.stringify(fn.Properties.Environment ?? {}).includes('SF_SES_MAX_SEND_RATE'),
    );
    expect(paced.map(([id]) => id)).toEqual([expect.stringMatching(/^EmailPipelineSender/)]);
  });

  it.each([0, 0.5, '-3', 'fast', 10_001])('refuses %j', (value) => {
    expect(() => synthSendflow({ [CONTEXT_SES_MAX_SEND_RATE]: value })).toThrow(
      /sendflow:sesMaxSendRate must be a number of emails per second from 1 to 10000/,
    );
  });
});

describe('sendRateShare', () => {
  it('rounds down to a thousandth, so the shares together never exceed the account rate', () => {
    expect(sendRateShare(14, 10)).toBe(1.4);
    expect(sendRateShare(10, 3)).toBe(3.333);
    expect(sendRateShare(1, 1000)).toBe(0.001);
    for (const [rate, n] of [
      [14, 3],
      [1, 7],
      [123.4, 999],
      [10_000, 2],
    ] as const) {
      const share = sendRateShare(rate, n);
      expect(share).toBeGreaterThan(0);
      expect(share * n).toBeLessThanOrEqual(rate);
    }
  });
});

describe('cdk.json', () => {
  it('states the defaults, valid as they stand (so an edit there is the only change to make)', async () => {
    // Arrange
    const { readFile } = await import('node:fs/promises');
    const { context } = JSON.parse(await readFile('cdk.json', 'utf8')) as { context: Record<string, unknown> };

    // Act: prod, declared unmonitored as the test stages are (cdk.json commits no one to page for it).
    const { api } = synthSendflow({ ...context, ...UNMONITORED_TEST_STAGES });

    // Assert
    expect(maxConcurrencyOf(api)).toEqual({ ...DEFAULT_MAX_CONCURRENCY, ...DLQ_CONSUMERS });
    expect(senderVariables(api).SF_SES_MAX_SEND_RATE).toBe('1.4');
  });
});

describe('a share too small for one email', () => {
  it('warns at synth when an invocation cannot send a full email in its window (a sandbox rate), and not by default', async () => {
    // Arrange
    const { Annotations, Match } = await import('aws-cdk-lib/assertions');
    const { SEND_DEADLINE_MARGIN_MS } = await import('../../lambdas/handlers/queue/send-worker');
    const { SEND_WINDOW_SECONDS, SLOW_SHARE_WARNING } = await import('../../lib/constructs/email-pipeline');

    // Act
    const sandbox = synthSendflow({ [CONTEXT_SES_MAX_SEND_RATE]: 1 }).stacks.api;
    const usual = synthSendflow().stacks.api;

    // Assert
    expect(SEND_WINDOW_SECONDS).toBe(queues.sends.functionTimeoutSeconds - SEND_DEADLINE_MARGIN_MS / 1000);
    const warning = Match.stringLikeRegexp(`needs 500 s.*${SLOW_SHARE_WARNING}`);
    Annotations.fromStack(sandbox).hasWarning('*', warning);
    Annotations.fromStack(usual).hasNoWarning('*', Match.stringLikeRegexp(SLOW_SHARE_WARNING));
  });
});
