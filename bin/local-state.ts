// Where a running local runtime announces itself, so the admin CLI from the same checkout can reach it.
// The file holds the admin token that flushes the runtime's authorizer cache: owner-only (0600, in 0700).
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../lambdas/runtime/local/private-files';

const checkout = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface LocalState {
  readonly pid: number;
  /** The API's base URL, stage included. */
  readonly url: string;
  readonly dynamoEndpoint: string;
  readonly dataDir: string;
  /** Authorizes POST ADMIN_FLUSH_PATH on the runtime (see lambdas/adapters/local/runtime-authorizer-cache.ts). */
  readonly adminToken: string;
}

export function localStateFile(): string {
  return process.env.SF_LOCAL_STATE_FILE ?? join(checkout, '.sendflow', 'local.json');
}

export function writeLocalState(file: string, state: LocalState): void {
  mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  // Written whole under another name, then renamed: a reader never sees half a file, and the mode is set
  // before the token is in it (a file left by an older version keeps its mode otherwise).
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(state), { mode: PRIVATE_FILE_MODE });
  chmodSync(temporary, PRIVATE_FILE_MODE);
  renameSync(temporary, file);
}

/** The state of a live local runtime, if its process still exists. */
export function runningLocalRuntime(file = localStateFile()): LocalState | undefined {
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as LocalState;
    process.kill(state.pid, 0);
    return state;
  } catch {
    return undefined;
  }
}
