// DynamoDB capacity per stage (`sendflow:capacity`, lib/table-capacity.ts): on demand unless the stage names tables
// to provision; a provisioned table and each of its GSIs auto scale at the stage's target utilization; a bad
// setting fails synth with every problem named; throttling alarms cover tables and GSIs alike; cdk-nag passes.
import { App, type CfnElement, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { type TableName, tableNames, tables } from '../../lambdas/manifest';
import { buildSendflow, CONTEXT_STAGE } from '../../lib/app';
import { deployedIndexes } from '../../lib/index-migration';
import { CONTEXT_CAPACITY, DEFAULT_TARGET_UTILIZATION, parseTableCapacity } from '../../lib/table-capacity';
import { SKIP_BUNDLING, synthSendflow, TEST_CONTEXT } from './synth';

type Resource = { Properties: Record<string, unknown> };
type AutoScaling = {
  MinCapacity: number;
  MaxCapacity: number;
  TargetTrackingScalingPolicyConfiguration: { TargetValue: number };
};

const deliveries = { minRead: 20, maxRead: 2000, minWrite: 100, maxWrite: 20000 };
const emails = { minRead: 10, maxRead: 500, minWrite: 50, maxWrite: 5000 };
const provisionedProd = {
  prod: { mode: 'provisioned', targetUtilization: 60, tables: { deliveries, emails } },
  staging: { mode: 'on-demand' },
};

function tableResources(synth: ReturnType<typeof synthSendflow>): Record<TableName, Resource> {
  const stack = synth.stacks.data;
  const all = synth.data.findResources('AWS::DynamoDB::GlobalTable') as Record<string, Resource>;
  return Object.fromEntries(
    tableNames.map((name) => [name, all[stack.getLogicalId(stack.tables[name].node.defaultChild as CfnElement)]]),
  ) as Record<TableName, Resource>;
}

/** The table's write and read auto scaling, and each GSI's, as the GlobalTable resource carries them. */
function scalingOf(table: Resource) {
  const p = table.Properties as {
    WriteProvisionedThroughputSettings?: { WriteCapacityAutoScalingSettings: AutoScaling };
    GlobalSecondaryIndexes?: {
      IndexName: string;
      WriteProvisionedThroughputSettings?: { WriteCapacityAutoScalingSettings: AutoScaling };
    }[];
    Replicas: {
      ReadProvisionedThroughputSettings?: { ReadCapacityAutoScalingSettings: AutoScaling };
      GlobalSecondaryIndexes?: {
        IndexName: string;
        ReadProvisionedThroughputSettings?: { ReadCapacityAutoScalingSettings: AutoScaling };
      }[];
    }[];
  };
  const [replica] = p.Replicas;
  return {
    write: p.WriteProvisionedThroughputSettings?.WriteCapacityAutoScalingSettings,
    read: replica?.ReadProvisionedThroughputSettings?.ReadCapacityAutoScalingSettings,
    indexes: (p.GlobalSecondaryIndexes ?? []).map((index) => ({
      name: index.IndexName,
      write: index.WriteProvisionedThroughputSettings?.WriteCapacityAutoScalingSettings,
      read: replica?.GlobalSecondaryIndexes?.find((r) => r.IndexName === index.IndexName)
        ?.ReadProvisionedThroughputSettings?.ReadCapacityAutoScalingSettings,
    })),
  };
}

const scaling = (min: number, max: number, target: number): AutoScaling => ({
  MinCapacity: min,
  MaxCapacity: max,
  TargetTrackingScalingPolicyConfiguration: { TargetValue: target },
});

describe('on demand by default', () => {
  it('bills every table and index per request when the stage names no capacity', () => {
    // Arrange & Act
    const synth = synthSendflow();

    // Assert
    for (const [name, table] of Object.entries(tableResources(synth))) {
      expect(table.Properties.BillingMode, name).toBe('PAY_PER_REQUEST');
      expect(scalingOf(table).write, name).toBeUndefined();
      expect(scalingOf(table).read, name).toBeUndefined();
      for (const index of scalingOf(table).indexes) expect(index.write, `${name} ${index.name}`).toBeUndefined();
    }
    expect(synth.data.findResources('AWS::ApplicationAutoScaling::ScalableTarget')).toEqual({});
  });

  it("keeps a stage on demand when only another stage's entry provisions", () => {
    const synth = synthSendflow({ [CONTEXT_CAPACITY]: provisionedProd, [CONTEXT_STAGE]: 'staging' });
    for (const table of Object.values(tableResources(synth))) {
      expect(table.Properties.BillingMode).toBe('PAY_PER_REQUEST');
    }
  });
});

describe('provisioned with auto scaling', () => {
  let synth: ReturnType<typeof synthSendflow>;
  let resources: Record<TableName, Resource>;
  beforeAll(() => {
    synth = synthSendflow({ [CONTEXT_CAPACITY]: provisionedProd });
    resources = tableResources(synth);
  });

  it('provisions the named tables with target tracking at the stage utilization, reads and writes', () => {
    for (const [name, bounds] of [
      ['deliveries', deliveries],
      ['emails', emails],
    ] as const) {
      const table = resources[name];
      expect(table.Properties.BillingMode, name).toBe('PROVISIONED');
      const { write, read } = scalingOf(table);
      expect(write).toEqual(scaling(bounds.minWrite, bounds.maxWrite, 60));
      expect(read).toEqual(scaling(bounds.minRead, bounds.maxRead, 60));
    }
  });

  it("scales every GSI of a provisioned table with the table's bounds (a GSI short of writes throttles the table)", () => {
    for (const [name, bounds] of [
      ['deliveries', deliveries],
      ['emails', emails],
    ] as const) {
      const { indexes } = scalingOf(resources[name]);
      expect(indexes.map((i) => i.name).sort()).toEqual((tables[name].indexes ?? []).map((i) => i.name).sort());
      expect(indexes.length).toBeGreaterThan(0);
      for (const index of indexes) {
        expect(index.write, `${name} ${index.name}`).toEqual(scaling(bounds.minWrite, bounds.maxWrite, 60));
        expect(index.read, `${name} ${index.name}`).toEqual(scaling(bounds.minRead, bounds.maxRead, 60));
      }
    }
  });

  it('leaves the tables it does not name on demand', () => {
    const others = tableNames.filter((name) => name !== 'deliveries' && name !== 'emails');
    expect(others.length).toBeGreaterThan(0);
    for (const name of others) expect(resources[name].Properties.BillingMode, name).toBe('PAY_PER_REQUEST');
  });

  it('takes the JSON of `-c sendflow:capacity=…`, and 70% when the stage names no target', () => {
    const fromCli = synthSendflow({
      [CONTEXT_CAPACITY]: JSON.stringify({ prod: { mode: 'provisioned', tables: { deliveries } } }),
    });
    const { write, indexes } = scalingOf(tableResources(fromCli).deliveries);
    expect(DEFAULT_TARGET_UTILIZATION).toBe(70);
    expect(write).toEqual(scaling(deliveries.minWrite, deliveries.maxWrite, 70));
    expect(indexes[0]?.write).toEqual(scaling(deliveries.minWrite, deliveries.maxWrite, 70));
  });

  it('passes cdk-nag AwsSolutions', () => {
    const app = new App({
      context: { ...TEST_CONTEXT, [CONTEXT_CAPACITY]: provisionedProd },
      builtinCloudFormationValidation: false,
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    buildSendflow(app);
    expect(() => app.synth()).not.toThrow();
  });
});

describe('a bad setting fails synth, naming each problem', () => {
  const refused = (setting: unknown) => () => parseTableCapacity(setting, 'prod');

  it('refuses an unknown table, reversed bounds, a target outside 20–90 and an unknown mode, all at once', () => {
    const bad = {
      prod: {
        mode: 'provisioned',
        targetUtilization: 95,
        tables: {
          deliverys: deliveries,
          emails: { ...emails, minWrite: 6000 },
        },
      },
      staging: { mode: 'reserved' },
    };
    expect(refused(bad)).toThrow(/sendflow:capacity/);
    expect(refused(bad)).toThrow(/prod\.targetUtilization/);
    expect(refused(bad)).toThrow(/prod\.tables: Unrecognized key: "deliverys" \(tables: accounts, /);
    expect(refused(bad)).toThrow(/prod\.tables\.emails\.minWrite: minWrite is above maxWrite/);
    expect(refused(bad)).toThrow(/staging\.mode/);
  });

  it('refuses missing bounds, fractional units, unknown keys, no tables, and JSON that does not parse', () => {
    expect(refused({ prod: { mode: 'provisioned', tables: { deliveries: { minRead: 1 } } } })).toThrow(
      /prod\.tables\.deliveries\.maxRead/,
    );
    expect(refused({ prod: { mode: 'provisioned', tables: { deliveries: { ...deliveries, minRead: 1.5 } } } })).toThrow(
      /prod\.tables\.deliveries\.minRead/,
    );
    expect(refused({ prod: { mode: 'on-demand', tables: {} } })).toThrow(/prod: Unrecognized key/);
    expect(refused({ prod: { mode: 'provisioned', tables: {} } })).toThrow(/name at least one table/);
    expect(refused('{"prod":')).toThrow(/sendflow:capacity must be a JSON object/);
    expect(() => synthSendflow({ [CONTEXT_CAPACITY]: { prod: { mode: 'provisioned' } } })).toThrow(
      /sendflow:capacity: prod\.tables/,
    );
  });
});

describe('throttling alarms', () => {
  it('page on throttled reads or writes of every GSI too (the table metric leaves them out)', () => {
    // Arrange
    const synth = synthSendflow({ [CONTEXT_CAPACITY]: provisionedProd });
    const alarms = Object.values(synth.api.findResources('AWS::CloudWatch::Alarm') as Record<string, Resource>);
    const app = new App({ context: SKIP_BUNDLING });

    // Assert: one alarm per deployed index, summing its read and write throttle events.
    for (const name of tableNames) {
      for (const index of deployedIndexes(app, name, tables[name])) {
        const suffix = `-${pascal(name)}${pascal(index.name)}IndexThrottles`;
        const matching = alarms.filter((a) => String(a.Properties.AlarmName).endsWith(suffix));
        expect(matching, suffix).toHaveLength(1);
        const [alarm] = matching as [Resource];
        const metrics = (alarm.Properties.Metrics as IndexMetric[]).filter((m) => m.MetricStat);
        expect(metrics.map((m) => m.MetricStat?.Metric.MetricName).sort()).toEqual([
          'ReadThrottleEvents',
          'WriteThrottleEvents',
        ]);
        for (const m of metrics) {
          expect(m.MetricStat?.Metric.Namespace).toBe('AWS/DynamoDB');
          const dimensions = Object.fromEntries(m.MetricStat?.Metric.Dimensions.map((d) => [d.Name, d.Value]) ?? []);
          expect(Object.keys(dimensions).sort()).toEqual(['GlobalSecondaryIndexName', 'TableName']);
          expect(dimensions.GlobalSecondaryIndexName).toBe(index.name);
        }
        expect(alarm.Properties.Threshold).toBe(1);
        expect(String(alarm.Properties.AlarmDescription)).toMatch(/provisioned capacity/);
      }
    }
  });

  it("says in each table's alarm that provisioned capacity exceeded throttles too", () => {
    const { api } = synthSendflow();
    const alarms = Object.values(api.findResources('AWS::CloudWatch::Alarm') as Record<string, Resource>);
    const tableAlarms = alarms.filter((a) => String(a.Properties.AlarmName).endsWith('TableThrottles'));
    expect(tableAlarms).toHaveLength(tableNames.length);
    for (const alarm of tableAlarms) expect(String(alarm.Properties.AlarmDescription)).toMatch(/provisioned capacity/);
  });
});

type IndexMetric = {
  MetricStat?: {
    Metric: { MetricName: string; Namespace: string; Dimensions: { Name: string; Value: unknown }[] };
  };
};

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
