// Every Lambda bundle, built with esbuild exactly as `cdk synth` builds it (bench/bundle-build.ts, which reads
// lib/constructs/node-function.ts's BUNDLING), stays within its size limit: 1 MB, the authorizer 500 KB. And
// each carries only the AWS SDK clients its function calls: a plug imported by the wrong entry point, or a
// module that pulls every adapter again, fails here. `npm run bench:bundles` prints the figures.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type BuiltBundle, buildBundle, bytesByPackage, FUNCTIONS } from '../../bench/bundle-build';

/** The SDK clients each function's code calls (its IAM policy is the other half of that story). */
const CLIENTS: Record<string, readonly string[]> = {
  // STS and EventBridge: test sends and manual retries to AWS destinations (the delivery worker's attempts too).
  api: ['api-gateway', 'dynamodb', 'eventbridge', 's3', 'scheduler', 'secrets-manager', 'sesv2', 'sqs', 'sts'],
  authorizer: ['dynamodb'],
  // SES v2 in the functions where accounts' notices arise (SF_NOTICE_FROM): judged reputation, disabled webhooks.
  dispatcher: ['dynamodb', 'sesv2', 'sqs'],
  delivery: ['dynamodb', 'eventbridge', 'scheduler', 'sesv2', 'sqs', 'sts'],
  reconciler: ['dynamodb', 'sesv2', 'sqs'],
  sender: ['dynamodb', 's3', 'sesv2', 'sqs'],
  'ses-events': ['dynamodb', 'sesv2', 'sqs'],
  // S3 reads the stored message and keeps its parts; email.received goes to the events queue.
  inbound: ['dynamodb', 's3', 'sqs'],
};

const bundles = new Map<string, BuiltBundle>();

beforeAll(async () => {
  // In memory (write: false); esbuild builds the seven in parallel in a few seconds.
  const out = join(tmpdir(), 'sendflow-bundle-sizes');
  for (const bundle of await Promise.all(FUNCTIONS.map((fn) => buildBundle(fn, join(out, fn.name), false)))) {
    bundles.set(bundle.fn.name, bundle);
  }
}, 60_000);

describe('Lambda bundles', () => {
  it('cover every function the benchmark knows, the authorizer with the tightest budget, the API with the largest', () => {
    expect([...bundles.keys()].sort()).toEqual(Object.keys(CLIENTS).sort());
    expect(FUNCTIONS.find((fn) => fn.name === 'authorizer')?.maxBytes).toBe(500_000);
    expect(FUNCTIONS.find((fn) => fn.name === 'api')?.maxBytes).toBe(1_500_000);
    expect(FUNCTIONS.filter((fn) => !['authorizer', 'api'].includes(fn.name)).map((fn) => fn.maxBytes)).toEqual(
      Array(6).fill(1_000_000),
    );
  });

  it.each(FUNCTIONS.map((fn) => [fn.name, fn.maxBytes] as const))('%s is at most %i bytes', (name, maxBytes) => {
    const bundle = bundles.get(name);
    const heaviest = bytesByPackage(bundle?.metafile ?? { inputs: {}, outputs: {} }).slice(0, 5);
    expect(bundle?.bytes, `heaviest packages: ${JSON.stringify(heaviest)}`).toBeLessThanOrEqual(maxBytes);
  });

  it.each(Object.entries(CLIENTS))('%s carries only the SDK clients it calls', (name, clients) => {
    const packages = bytesByPackage(bundles.get(name)?.metafile ?? { inputs: {}, outputs: {} }).map(([p]) => p);
    const carried = packages.filter((p) => p.startsWith('@aws-sdk/client-')).map((p) => p.slice(16));
    expect(carried.sort()).toEqual([...clients].sort());
  });

  it('no bundle carries the default credential chain (profiles, SSO, STS, IMDS): Lambda gives credentials in the environment', () => {
    for (const { fn, metafile } of bundles.values()) {
      const packages = bytesByPackage(metafile).map(([p]) => p);
      expect(
        packages.filter((p) => /credential-provider|nested-clients|token-providers/.test(p)),
        fn.name,
      ).toEqual([]);
      const inputs = Object.values(metafile.outputs).flatMap((out) => Object.keys(out.inputs));
      expect(
        inputs.some((input) => input.endsWith('lambdas/runtime/aws/lambda-credentials.ts')),
        fn.name,
      ).toBe(true);
    }
  });

  it('no bundle carries undici (the webhook sender uses node:http) nor all of zod (imported as a namespace)', () => {
    for (const { fn, metafile } of bundles.values()) {
      const packages = new Map(bytesByPackage(metafile));
      expect(packages.has('undici'), fn.name).toBe(false);
      // zod's whole classic API is about 450 KB; what the schemas use is about 100 KB.
      expect(packages.get('zod') ?? 0, fn.name).toBeLessThan(150_000);
    }
  });
});
