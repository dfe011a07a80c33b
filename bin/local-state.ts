// Where a running local runtime announces itself, so the admin CLI from the same checkout can reach it.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const checkout = join(dirname(fileURLToPath(import.meta.url)), '..');

export function localStateFile(): string {
  return process.env.SF_LOCAL_STATE_FILE ?? join(checkout, '.sendflow', 'local.json');
}
