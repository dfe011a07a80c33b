// `npm run openapi`: writes docs/openapi.json from the manifest and the handlers' schemas.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApi } from '../lambdas/handlers/http/openapi';

const file = join(import.meta.dirname, '..', 'docs', 'openapi.json');
writeFileSync(file, `${JSON.stringify(buildOpenApi(), null, 2)}\n`);
console.log(`wrote ${file}`);
