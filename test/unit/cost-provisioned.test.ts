// Keeps bench:cost's provisioned figures honest: which tables and GSIs the synthesized deployment provisions and
// at what target utilization, and a sample's DynamoDB units priced in that mode, recomputed by hand from the
// hourly unit prices (a steady unit a second held at 70% utilization).
import { describe, expect, it } from 'vitest';
import { bill } from '../../bench/cost/bill';
import { provisionedUnitCost } from '../../bench/cost/billing';
import { readDeployment } from '../../bench/cost/deployment';
import type { Usage } from '../../bench/cost/meter';
import { PRICES } from '../../bench/cost/prices';
import { tables } from '../../lambdas/manifest';
import { CONTEXT_CAPACITY } from '../../lib/table-capacity';

const deliveriesProvisioned = {
  [CONTEXT_CAPACITY]: {
    prod: {
      mode: 'provisioned',
      targetUtilization: 70,
      tables: { deliveries: { minRead: 5, maxRead: 1000, minWrite: 5, maxWrite: 40000 } },
    },
  },
};

/** A sample that did nothing but these DynamoDB units. */
function sampleOf(writeUnits: Record<string, number>, readUnits: Record<string, number>) {
  const usage = {
    invocations: [],
    logs: [],
    dynamo: {
      writeUnits: new Map(Object.entries(writeUnits)),
      readUnits: new Map(Object.entries(readUnits)),
      storedBytes: new Map(),
    },
    s3: { put: 0, get: 0, objects: 0, tags: 0, storedBytes: 0 },
    sqs: new Map(),
    scheduler: 0,
  } as unknown as Usage;
  return { usage, deliveries: 0, emails: 0, recipients: 0, events: 0, apiRequests: 0, egressBytes: 0 } as never;
}

describe('provisioned capacity in bench:cost', () => {
  it('prices a unit consumed at the hourly rate over 3,600 unit-seconds and the target utilization', () => {
    // $0.00065 per WCU-hour: a million write units at a steady rate, 70% utilized, is 1e6 / 3600 / 0.7 WCU-hours.
    expect(PRICES.dynamodb.writeCapacityUnitHour).toBe(0.00065);
    expect(PRICES.dynamodb.readCapacityUnitHour).toBe(0.00013);
    expect(provisionedUnitCost(0.00065, 0.7) * 1e6).toBeCloseTo((1e6 / 3600 / 0.7) * 0.00065, 12);
    expect(provisionedUnitCost(0.00065, 0.7) * 1e6).toBeCloseTo(0.257937, 6); // against $0.625 on demand
    expect(provisionedUnitCost(0.00013, 0.7) * 1e6).toBeCloseTo(0.051587, 6); // against $0.125 on demand
    expect(() => provisionedUnitCost(0.00065, 0)).toThrow(/utilization/);
  });

  it('reads no provisioned table from the default stage, and the named table and its GSIs when a stage provisions', () => {
    expect(readDeployment().provisioned?.size).toBe(0);

    const provisioned = readDeployment(deliveriesProvisioned).provisioned;
    const indexes = (tables.deliveries.indexes ?? []).map((i) => `deliveries ${i.name}`);
    expect([...(provisioned?.keys() ?? [])].sort()).toEqual(['deliveries', ...indexes].sort());
    for (const name of ['deliveries', ...indexes]) expect(provisioned?.get(name)).toEqual({ read: 0.7, write: 0.7 });
  });

  it("bills a sample's units on demand or provisioned, table by table, recomputed by hand", () => {
    // Arrange: 2 million write units on the table, half a million on an index, a million on emails (on demand
    // in both), 100,000 read units on the table.
    const sample = sampleOf(
      { deliveries: 2_000_000, 'deliveries byDueShard': 500_000, emails: 1_000_000 },
      { deliveries: 100_000 },
    );

    // Act
    const onDemand = bill(sample, readDeployment());
    const provisioned = bill(sample, readDeployment(deliveriesProvisioned));

    // Assert: on demand, $0.625 and $0.125 per million request units.
    expect(onDemand['dynamodb_wru deliveries']).toBeCloseTo(1.25, 12);
    expect(onDemand['dynamodb_wru deliveries byDueShard']).toBeCloseTo(0.3125, 12);
    expect(onDemand['dynamodb_rru deliveries']).toBeCloseTo(0.0125, 12);
    // Provisioned: 2e6 unit-seconds = 555.6 WCU-hours consumed, 793.7 provisioned at 70%, × $0.00065 = $0.5159.
    expect(provisioned['dynamodb_wcu deliveries']).toBeCloseTo(((2e6 / 3600) * 0.00065) / 0.7, 12);
    expect(provisioned['dynamodb_wcu deliveries']).toBeCloseTo(0.515873, 6);
    expect(provisioned['dynamodb_wcu deliveries byDueShard']).toBeCloseTo(0.128968, 6);
    expect(provisioned['dynamodb_rcu deliveries']).toBeCloseTo(((1e5 / 3600) * 0.00013) / 0.7, 12);
    expect(provisioned['dynamodb_wru deliveries']).toBeUndefined();
    // A table the stage leaves on demand is billed per request in both.
    expect(provisioned['dynamodb_wru emails']).toBeCloseTo(0.625, 12);
    expect(onDemand['dynamodb_wru emails']).toBeCloseTo(0.625, 12);
  });
});
