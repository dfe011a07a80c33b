// Email bodies in the local runtime, standing in for S3: one owner-only file per email under the data directory,
// `<dataDir>/emails/<emailId>/body.json` (the object key on AWS), written once; with SF_DATA_DIR=:memory: a map.
// The files hold what the S3 objects hold (email-body-object.ts encodes both).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EmailBody, EmailBodyStore } from '../../app/emails/ports';
import { bodyKey, decodeBody, encodeBody } from '../email-body-object';

/** Email ids are `email_` and Crockford base32: nothing that could leave the directory. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,100}$/;

export class FileEmailBodyStore implements EmailBodyStore {
  constructor(
    private readonly dataDir: string,
    private readonly now: () => number = Date.now,
  ) {}

  private path(emailId: string): string {
    if (!SAFE_ID.test(emailId)) throw new Error(`Not an email id: ${JSON.stringify(emailId)}`);
    return join(this.dataDir, bodyKey(emailId));
  }

  async putMany(bodies: readonly { emailId: string; body: EmailBody; expiresAt: number }[]): Promise<void> {
    for (const { emailId, body, expiresAt } of bodies) {
      const path = this.path(emailId);
      await mkdir(join(path, '..'), { recursive: true, mode: 0o700 });
      await writeFile(path, encodeBody(body, expiresAt), { mode: 0o600 });
    }
  }

  async get(emailId: string): Promise<EmailBody | null> {
    if (!SAFE_ID.test(emailId)) return null;
    try {
      return decodeBody(await readFile(this.path(emailId)), this.now());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }
}

/** SF_DATA_DIR=:memory: keeps bodies as long as the process, as it keeps everything else. */
export class MemoryEmailBodyStore implements EmailBodyStore {
  private readonly bodies = new Map<string, Buffer>();

  constructor(private readonly now: () => number = Date.now) {}

  async putMany(bodies: readonly { emailId: string; body: EmailBody; expiresAt: number }[]): Promise<void> {
    for (const { emailId, body, expiresAt } of bodies) this.bodies.set(emailId, encodeBody(body, expiresAt));
  }

  async get(emailId: string): Promise<EmailBody | null> {
    const stored = this.bodies.get(emailId);
    return stored === undefined ? null : decodeBody(stored, this.now());
  }
}

/** The local runtime's body store for its data directory. */
export function localEmailBodies(dataDir: string): EmailBodyStore {
  return dataDir === ':memory:' ? new MemoryEmailBodyStore() : new FileEmailBodyStore(dataDir);
}
