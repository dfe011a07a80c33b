// The runtime bench:cost measures: the local runtime in memory with what the functions log on AWS (INFO lines,
// EMF metrics), dynalite's write log loaded, the meter on its DynamoDB client and queues, and bodies where AWS
// keeps them (small ones in DynamoDB, large ones in a counted S3 stand-in). Shared by bench/cost.ts and bench/email-writes.ts so both measure the same thing.
import { S3EmailBodyStore } from '../../lambdas/adapters/aws/s3-email-bodies';
import { DynamoEmailBodyStore } from '../../lambdas/adapters/dynamodb/email-bodies';
import { TieredEmailBodyStore } from '../../lambdas/adapters/tiered-email-bodies';
import * as endpointHealth from '../../lambdas/domain/webhooks/endpoint-health';
import { DEFAULT_WEBHOOK_CACHE_SECONDS, loadConfig, localTableDefaults } from '../../lambdas/runtime/config';
import { documentClient } from '../../lambdas/runtime/document-client';
import { startLocalRuntime } from '../../lambdas/runtime/local/runtime';
import type { Deployment } from './deployment';
import { createMeter, WRITE_LOG } from './meter';
import { type Harness, Receiver } from './workloads';

/** The least severe application log level of the functions (INFO where Lambda does not filter: text logs). */
function lowestApplicationLevel(deployment: Deployment): 'DEBUG' | 'INFO' {
  const levels = [...deployment.functions.values()].map((f) => f.logging.applicationLevel ?? 'INFO');
  return levels.some((level) => level === 'DEBUG' || level === 'TRACE') ? 'DEBUG' : 'INFO';
}

export async function startHarness(deployment: Deployment): Promise<Harness> {
  const config = loadConfig(
    {
      ...localTableDefaults(),
      PORT: '0',
      SF_HOST: '127.0.0.1',
      SF_SEED: 'false',
      SF_DATA_DIR: ':memory:',
      // What the functions log and emit on AWS: lines at the functions' application log level (Powertools
      // takes it from Lambda there; the meter drops, per function, what its level filters) and EMF metrics.
      POWERTOOLS_LOG_LEVEL: lowestApplicationLevel(deployment),
      SF_METRICS: 'true',
      SF_METRICS_SERVICE: 'SendflowApi-prod',
      SF_SIMULATOR_STEP_SECONDS: '0',
      SF_ALLOW_PRIVATE_WEBHOOKS: 'true',
      SF_AUTH_CACHE_TTL: String(deployment.authorizerCacheTtlSeconds),
      // The delivery worker keeps a webhook it read as on AWS (the local runtime's default reads every batch's).
      SF_WEBHOOK_CACHE_SECONDS: String(DEFAULT_WEBHOOK_CACHE_SECONDS),
      // The reconciler is a fixed once-a-minute cost on AWS (fixedMonthly), not a per-unit one.
      SF_RECONCILE_INTERVAL_SECONDS: '3600',
    },
    {},
  );
  const meter = createMeter(config.tables);
  const runtime = await startLocalRuntime(config, {
    // The lanes as AWS runs them (a container per batch), where the code has them apart from the local runtime's;
    // a checkout from before that (BENCH_BEFORE) has one set of rules for both.
    ...awsLanes(),
    // And batches as large as the event sources hand out (an older checkout ignores this: its batches were 10).
    awsBatches: true,
    dynamoPreload: WRITE_LOG,
    instrument: (c) => meter.instrument(c),
    // Bodies where AWS keeps them (lambdas/runtime/aws/plugs/bodies.ts): small ones in the emailParts table,
    // priced as written, larger ones through the S3 adapter (its keys, its reads) to a bucket in memory whose
    // requests, bytes and tags the meter counts.
    emailBodies: (client) =>
      new TieredEmailBodyStore(
        new DynamoEmailBodyStore(documentClient(client), config.tables.emailParts),
        new S3EmailBodyStore(meter.s3Client(), 'bench-email-bodies', {
          retentionSeconds: config.emailRetentionSeconds,
        }),
      ),
  });
  meter.attach(runtime);
  meter.oneBatchAtATime('deliveries');
  meter.oneBatchAtATime('slowDeliveries');
  const receiver = await Receiver.start();
  return { runtime, meter, receiver };
}

/** AWS's lane rules, where this checkout has them (a namespace import: an older one, measured by BENCH_BEFORE, has none). */
function awsLanes(): { lanePolicy?: endpointHealth.LanePolicy } {
  const policy = (endpointHealth as { AWS_LANE_POLICY?: endpointHealth.LanePolicy }).AWS_LANE_POLICY;
  return policy ? { lanePolicy: policy } : {};
}
