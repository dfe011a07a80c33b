// The local data stays the user's own: the data directory owner-only (0700) whatever the umask or an older
// version left, so the store, the signing secret and API key hashes are not readable by other local users.
import { chmodSync } from 'node:fs';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** After the embedded store has made (or refused, with a clear error) the directory. */
export function makeDataDirPrivate(dataDir: string): void {
  if (dataDir !== ':memory:') chmodSync(dataDir, PRIVATE_DIR_MODE);
}
