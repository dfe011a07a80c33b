// Identifiers derived from what must be unique per tenant (a domain name, a contact's address): a second
// create of the same thing collides on the key, with no index or transaction needed.
import { createHash } from 'node:crypto';
import { CROCKFORD } from './ids';

export function derivedId(prefix: string, ...parts: readonly string[]): string {
  const digest = createHash('sha256').update(parts.join('\n')).digest();
  let body = '';
  for (const byte of digest.subarray(0, 20)) body += CROCKFORD[byte % 32];
  return `${prefix}_${body.toLowerCase()}`;
}

/** A DNS name we accept as a sending domain: lower-case labels, at least two, 253 characters at most. */
export function isDomainName(name: string): boolean {
  return name.length <= 253 && /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(name);
}
