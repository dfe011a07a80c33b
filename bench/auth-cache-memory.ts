// `node --expose-gc --import tsx bench/auth-cache-memory.ts`: what unique Authorization values cost the local
// gateway's authorizer cache. One runtime (in memory, SF_AUTH_CACHE_TTL=60) takes BENCH_REQUESTS (default
// 16,000) GET /v1/api-keys, each with its own 15 KB Authorization value (20 at a time), all denied; prints the
// answers, the heap's growth after a full GC and the cache's entries.
import { request } from 'node:http';
import { startLocalRuntime } from '../lambdas/runtime/local/runtime';
import { benchConfig, positiveInt, printTable } from './report';

const REQUESTS = positiveInt('BENCH_REQUESTS', 16_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const runtime = await startLocalRuntime(
  benchConfig({ SF_DATA_DIR: ':memory:', SF_AUTH_CACHE_TTL: '60', SF_IP_RATE_LIMIT: '100000' }),
);
const get = (authorization: string) =>
  new Promise<number>((resolve, reject) => {
    const req = request(`${runtime.url}/api-keys`, { headers: { Authorization: authorization } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });

const before = heapUsed();
const statuses = new Map<number, number>();
let next = 0;
await Promise.all(
  Array.from({ length: 20 }, async () => {
    while (next < REQUESTS) {
      const id = (next++).toString().padStart(32, '0');
      const status = await get(`Bearer sf_test_${id}${'x'.repeat(15_000)}`);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  }),
);
const growth = heapUsed() - before;
printTable(
  ['requests', 'answers', 'heap growth', 'cache entries'],
  [
    [
      String(REQUESTS),
      [...statuses].map(([status, count]) => `${count} × ${status}`).join(', '),
      `${Math.round(growth / 1e6)} MB`,
      String(runtime.authorizerCache.size),
    ],
  ],
);
await runtime.stop();
