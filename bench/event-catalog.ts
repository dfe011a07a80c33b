// `node --import tsx bench/event-catalog.ts`: what the event catalog costs the API function. Its zod schemas are
// made at import; the JSON Schemas are made on the first GET /v1/event-types (or OpenAPI build) and kept.
// Prints the import and first-build times, the cached call, and the answer's and the OpenAPI document's sizes.
import { gzipSync } from 'node:zlib';

const runs = Number(process.env.BENCH_RUNS ?? 1);
const started = performance.now();
const { eventCatalog } = await import('../lambdas/handlers/http/event-catalog');
const imported = performance.now();
const catalog = eventCatalog();
const built = performance.now();
for (let i = 0; i < runs; i++) eventCatalog();
const cached = performance.now();
const { buildOpenApi } = await import('../lambdas/handlers/http/openapi');
const body = JSON.stringify({ object: 'list', data: catalog });
const openapi = JSON.stringify(buildOpenApi());
console.log(
  JSON.stringify({
    types: catalog.length,
    importMs: Number((imported - started).toFixed(1)),
    firstBuildMs: Number((built - imported).toFixed(2)),
    cachedCallUs: Number((((cached - built) / runs) * 1000).toFixed(3)),
    answerBytes: Buffer.byteLength(body),
    answerGzipBytes: gzipSync(body).length,
    openapiBytes: Buffer.byteLength(openapi),
    openapiGzipBytes: gzipSync(openapi).length,
  }),
);
