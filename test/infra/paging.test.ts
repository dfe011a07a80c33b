// Alarms reach a person (issue 29, item 2). A stage is synthesized only with someone to page (an e-mail address or
// an HTTPS pager endpoint in sendflow:alarmSubscribers, committed in cdk.json) or when committed configuration
// declares it unmonitored (sendflow:unmonitoredStages). A few composite alarms of symptoms page (deliveries late,
// the API failing or slow, sends late, data at risk, the SES reputation): at most 10 alarms use the paging topic;
// every other alarm notifies a second, non-paging topic.
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import {
  buildSendflow,
  CONTEXT_ALARM_EMAILS,
  CONTEXT_ALARM_SUBSCRIBERS,
  CONTEXT_STAGE,
  CONTEXT_UNMONITORED_STAGES,
  settingsFromContext,
} from '../../lib/app';
import { MAX_PAGING_ALARMS, NEAR_RETENTION_SHARE } from '../../lib/constructs/monitoring';
import { CONTEXT_INBOUND } from '../../lib/inbound-settings';
import { SKIP_BUNDLING, synthSendflow } from './synth';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Resources = Record<string, Resource>;

const PAGER = 'https://events.pagerduty.com/integration/0123456789abcdef0123456789abcdef/enqueue';
/** Nothing declared unmonitored: what a stage without a subscriber meets. */
const NONE_UNMONITORED = { [CONTEXT_UNMONITORED_STAGES]: [] };

const resourcesOf = (template: Template) => template.toJSON().Resources as Resources;
const ofType = (template: Template, type: string) =>
  Object.entries(resourcesOf(template)).filter(([, r]) => r.Type === type);
/** The paging topic (output AlarmTopicArn) and the non-paging one (output NotifyTopicArn), by logical id. */
function topics(template: Template): { paging: string; notify: string } {
  const outputs = template.findOutputs('*');
  return {
    paging: (outputs.AlarmTopicArn?.Value as { Ref: string } | undefined)?.Ref ?? '',
    notify: (outputs.NotifyTopicArn?.Value as { Ref: string } | undefined)?.Ref ?? '',
  };
}
/** Every alarm, metric and composite, with the topics its ALARM actions name. */
function alarmActions(template: Template): { id: string; type: string; name: string; actions: string[] }[] {
  return [...ofType(template, 'AWS::CloudWatch::Alarm'), ...ofType(template, 'AWS::CloudWatch::CompositeAlarm')].map(
    ([id, r]) => ({
      id,
      type: r.Type,
      name: String(r.Properties.AlarmName),
      actions: ((r.Properties.AlarmActions ?? []) as { Ref: string }[]).map((a) => a.Ref),
    }),
  );
}
function composite(template: Template, suffix: string): Resource['Properties'] {
  const found = ofType(template, 'AWS::CloudWatch::CompositeAlarm').find(([, r]) =>
    String(r.Properties.AlarmName).endsWith(`-${suffix}`),
  );
  if (!found) throw new Error(`no composite alarm ${suffix}`);
  return found[1].Properties;
}
/** Logical ids of the alarms a composite alarm's rule names (ALARM("arn…") of each). */
function childrenOf(template: Template, rule: unknown): string[] {
  const text = JSON.stringify(rule);
  return ofType(template, 'AWS::CloudWatch::Alarm')
    .map(([id]) => id)
    .filter((id) => text.includes(`"${id}","Arn"`));
}
const nameOf = (template: Template, id: string) => String(resourcesOf(template)[id]?.Properties.AlarmName);

describe('a stage without anyone to page', () => {
  it('is refused at synth, naming the setting, unless declared unmonitored', () => {
    for (const stage of ['prod', 'staging']) {
      expect(() => synthSendflow({ ...NONE_UNMONITORED, [CONTEXT_STAGE]: stage })).toThrow(
        new RegExp(
          `Stage ${stage} has no alarm subscriber.*${CONTEXT_ALARM_SUBSCRIBERS}.*${CONTEXT_UNMONITORED_STAGES}`,
        ),
      );
    }
    // Handed to buildSendflow directly, as well: nothing is built.
    const app = new App({ context: SKIP_BUNDLING });
    expect(() => buildSendflow(app, { authorizerCacheTtlSeconds: 60 })).toThrow(/sendflow:alarmSubscribers/);
    expect(app.node.children).toEqual([]);
  });

  it('is synthesized when declared unmonitored, by name or by a prefix pattern, with no subscription', () => {
    const context = { [CONTEXT_UNMONITORED_STAGES]: ['ci', 'dev-*'] };
    for (const stage of ['ci', 'dev-alice']) {
      const { api } = synthSendflow({ ...context, [CONTEXT_STAGE]: stage });
      expect(ofType(api, 'AWS::SNS::Subscription')).toEqual([]);
      // Same alarms and topics as a monitored stage: a subscriber added later changes nothing else.
      expect(alarmActions(api).length).toBeGreaterThan(20);
    }
    expect(() => synthSendflow({ ...context, [CONTEXT_STAGE]: 'prod' })).toThrow(/Stage prod has no alarm subscriber/);
    expect(() => synthSendflow({ ...context, [CONTEXT_STAGE]: 'devx' })).toThrow(/Stage devx has no alarm subscriber/);
  });

  it('refuses a pattern that would declare every stage unmonitored, and malformed entries', () => {
    for (const bad of [['*'], ['Prod'], 'ci', [''], ['dev-**'], [3]]) {
      expect(() => synthSendflow({ [CONTEXT_UNMONITORED_STAGES]: bad }), JSON.stringify(bad)).toThrow(
        /sendflow:unmonitoredStages/,
      );
    }
    expect(() =>
      synthSendflow({ [CONTEXT_UNMONITORED_STAGES]: JSON.stringify(['ci']), [CONTEXT_STAGE]: 'ci' }),
    ).not.toThrow();
  });

  it('cdk.json declares the stage `npm run synth` checks (offline, no subscriber), and no other by default', () => {
    // Arrange: the committed configuration, as the CDK CLI hands it to bin/app.ts.
    const committed = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;
    const script = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts.synth;
    const stage = /-c sendflow:stage=([a-z0-9-]+)/.exec(script)?.[1];

    // Act
    const settings = settingsFromContext(new App({ context: { ...committed, [CONTEXT_STAGE]: stage } }));

    // Assert
    expect(stage).toBeDefined();
    expect(settings.unmonitored).toBe(true);
    expect(() => synthSendflow({ ...committed, [CONTEXT_STAGE]: stage })).not.toThrow();
    expect(committed[CONTEXT_UNMONITORED_STAGES]).not.toContain('prod');
  });
});

describe('subscribers', () => {
  it('subscribes e-mail addresses and HTTPS pager endpoints to the paging topic', () => {
    // Arrange
    const { api } = synthSendflow({
      ...NONE_UNMONITORED,
      [CONTEXT_ALARM_SUBSCRIBERS]: { prod: ['oncall@example.com', PAGER], staging: ['dev@example.com'] },
    });

    // Act
    const subscriptions = ofType(api, 'AWS::SNS::Subscription').map(([, r]) => r.Properties);

    // Assert
    const paging = { Ref: topics(api).paging };
    expect(subscriptions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: paging }),
        expect.objectContaining({ Protocol: 'https', Endpoint: PAGER, TopicArn: paging }),
      ]),
    );
    expect(subscriptions).toHaveLength(2);
  });

  it('takes a stage object: page (the paging topic) and notify (the non-paging topic, optional)', () => {
    const { api } = synthSendflow({
      ...NONE_UNMONITORED,
      [CONTEXT_ALARM_SUBSCRIBERS]: JSON.stringify({
        prod: { page: [PAGER], notify: ['platform-team@example.com'] },
      }),
    });
    const { paging, notify } = topics(api);
    const byEndpoint = Object.fromEntries(
      ofType(api, 'AWS::SNS::Subscription').map(([, r]) => [r.Properties.Endpoint, r.Properties.TopicArn]),
    );
    expect(byEndpoint).toEqual({ [PAGER]: { Ref: paging }, 'platform-team@example.com': { Ref: notify } });
  });

  it('counts the older sendflow:alarmEmails as page subscribers (same subscription, so no new confirmation)', () => {
    const { api } = synthSendflow({ ...NONE_UNMONITORED, [CONTEXT_ALARM_EMAILS]: { prod: ['oncall@example.com'] } });
    const [[id, subscription]] = ofType(api, 'AWS::SNS::Subscription') as [[string, Resource]];
    expect(subscription.Properties).toMatchObject({ Protocol: 'email', TopicArn: { Ref: topics(api).paging } });
    // The logical id it had when every alarm notified this one topic: an existing confirmed subscription stays.
    expect(id).toMatch(/^MonitoringAlarmTopiconcallexamplecom/);
  });

  it('needs a page subscriber: notify subscribers alone do not make a stage monitored', () => {
    expect(() =>
      synthSendflow({ ...NONE_UNMONITORED, [CONTEXT_ALARM_SUBSCRIBERS]: { prod: { notify: ['team@example.com'] } } }),
    ).toThrow(/Stage prod has no alarm subscriber/);
  });

  it.each([
    [{ prod: ['http://pager.example.com/hook'] }, /https/],
    [{ prod: ['ftp://pager.example.com'] }, /https/],
    [{ prod: ['not an address'] }, /not an e-mail address or an https:\/\/ URL/],
    [{ prod: { page: ['oncall@example.com'], sms: ['+15555550100'] } }, /unknown.*sms/],
    [{ prod: 'oncall@example.com' }, /list/],
  ])('refuses %j, naming sendflow:alarmSubscribers', (value, reason) => {
    expect(() => synthSendflow({ [CONTEXT_ALARM_SUBSCRIBERS]: value })).toThrow(/sendflow:alarmSubscribers/);
    expect(() => synthSendflow({ [CONTEXT_ALARM_SUBSCRIBERS]: value })).toThrow(reason);
  });
});

describe('what pages', () => {
  const withInbound = () =>
    synthSendflow({
      ...NONE_UNMONITORED,
      [CONTEXT_ALARM_SUBSCRIBERS]: { prod: ['oncall@example.com'] },
      [CONTEXT_INBOUND]: { prod: { region: 'eu-west-1', activate: true } },
    }).api;

  it.each([
    ['default', () => synthSendflow().api],
    ['receiving email', withInbound],
  ])(
    'at most 10 alarms use the paging topic, all composites; every other alarm notifies the non-paging one (%s)',
    (_name, synth) => {
      // Arrange
      const api = synth();
      const { paging, notify } = topics(api);

      // Act
      const all = alarmActions(api);
      const pages = all.filter((a) => a.actions.includes(paging));

      // Assert
      expect(pages.length).toBeGreaterThanOrEqual(4);
      expect(pages.length).toBeLessThanOrEqual(MAX_PAGING_ALARMS);
      expect(MAX_PAGING_ALARMS).toBeLessThanOrEqual(10);
      for (const page of pages) expect(page.type, page.name).toBe('AWS::CloudWatch::CompositeAlarm');
      const rest = all.filter((a) => !a.actions.includes(paging));
      expect(rest.length).toBeGreaterThan(50);
      for (const alarm of rest)
        expect({ name: alarm.name, actions: alarm.actions }).toEqual({ name: alarm.name, actions: [notify] });
      // Pages and notices both say when they recover.
      for (const [, r] of ofType(api, 'AWS::CloudWatch::CompositeAlarm')) {
        expect(r.Properties.OKActions).toEqual([{ Ref: paging }]);
      }
      for (const [, r] of ofType(api, 'AWS::CloudWatch::Alarm'))
        expect(r.Properties.OKActions).toEqual([{ Ref: notify }]);
    },
  );

  it('pages when deliveries are late: the events, deliveries (and bypass), slow-lane and provider-events queues fall behind', () => {
    const api = synthSendflow().api;
    const rule = composite(api, 'DeliveriesLate').AlarmRule;
    expect(
      childrenOf(api, rule)
        .map((id) => nameOf(api, id))
        .sort(),
    ).toEqual(
      ['Deliveries', 'DeliveriesBypass', 'Events', 'ProviderEvents', 'SlowDeliveries']
        .map((q) => `Sendflow-prod-Api-${q}QueueOldestMessage`)
        .sort(),
    );
    expect(JSON.stringify(rule)).toMatch(/^"ALARM\(|^\{"Fn::Join"/);
  });

  it('pages when the API fails or is slow: 5XX answers, p99 latency', () => {
    const api = synthSendflow().api;
    const children = childrenOf(api, composite(api, 'ApiUnhealthy').AlarmRule).map((id) => nameOf(api, id));
    expect(children.sort()).toEqual(['Sendflow-prod-Api-Api5xx', 'Sendflow-prod-Api-ApiLatencyP99']);
  });

  it('pages when sends are late: SendLag p90, the sends queue falling behind', () => {
    const api = synthSendflow().api;
    const children = childrenOf(api, composite(api, 'SendsLate').AlarmRule).map((id) => nameOf(api, id));
    expect(children.sort()).toEqual(['Sendflow-prod-Api-SendLagP90', 'Sendflow-prod-Api-SendsQueueOldestMessage']);
  });

  it('pages on a risk of losing data: any dead letter, any queue message near its retention', () => {
    // Arrange
    const api = withInbound();

    // Act
    const children = childrenOf(api, composite(api, 'DataLossRisk').AlarmRule).map((id) => nameOf(api, id));

    // Assert: every DLQ alarm of the stack, every near-retention alarm, the inbound failures.
    const all = alarmActions(api).map((a) => a.name);
    const expected = all.filter((name) =>
      /DlqDepth$|QueueNearRetention$|-InboundFailuresDepth$|-InboundDestinationDeliveryFailures$/.test(name),
    );
    expect(children.sort()).toEqual(expected.sort());
    // Events, deliveries and its bypass, slow deliveries, sends, provider events.
    expect(children.filter((n) => n.endsWith('QueueNearRetention'))).toHaveLength(6);
    expect(children.filter((n) => n.endsWith('DlqDepth'))).toHaveLength(8);
    expect(children).toEqual(
      expect.arrayContaining([
        'Sendflow-prod-Api-InboundFailuresDepth',
        'Sendflow-prod-Api-InboundDestinationDeliveryFailures',
      ]),
    );
  });

  it('pages before SES reviews the account: the bounce or complaint rate alarm', () => {
    const api = synthSendflow().api;
    const children = childrenOf(api, composite(api, 'SesReputation').AlarmRule).map((id) => nameOf(api, id));
    expect(children.sort()).toEqual(['Sendflow-prod-Api-SesBounceRate', 'Sendflow-prod-Api-SesComplaintRate']);
  });

  it('alarms when a main queue keeps a message for most of its retention (then it would be deleted unread)', () => {
    const api = synthSendflow().api;
    const queues = resourcesOf(api);
    const near = ofType(api, 'AWS::CloudWatch::Alarm').filter(([, r]) =>
      String(r.Properties.AlarmName).endsWith('QueueNearRetention'),
    );
    expect(near).toHaveLength(6);
    for (const [, alarm] of near) {
      const queueRef = (alarm.Properties.Dimensions as { Value: { 'Fn::GetAtt': [string] } }[])[0]?.Value[
        'Fn::GetAtt'
      ][0] as string;
      const retention = Number(queues[queueRef]?.Properties.MessageRetentionPeriod ?? 345_600);
      expect(alarm.Properties).toMatchObject({
        MetricName: 'ApproximateAgeOfOldestMessage',
        Threshold: Math.floor(retention * NEAR_RETENTION_SHARE),
        ComparisonOperator: 'GreaterThanThreshold',
      });
    }
  });

  it('names every composite alarm after its stage', () => {
    const staging = synthSendflow({ [CONTEXT_STAGE]: 'staging' }).api;
    const names = ofType(staging, 'AWS::CloudWatch::CompositeAlarm').map(([, r]) => String(r.Properties.AlarmName));
    expect(names.sort()).toEqual(
      ['ApiUnhealthy', 'DataLossRisk', 'DeliveriesLate', 'SendsLate', 'SesReputation'].map(
        (n) => `Sendflow-staging-Api-${n}`,
      ),
    );
  });
});
