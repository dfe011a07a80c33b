// DNS lookup that refuses non-public addresses (DESIGN §4). Used as the socket's `lookup`, the address a
// connection goes to is the address that was checked: no second resolution, so no DNS rebinding.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPublicAddress } from '../../domain/webhooks/address-guard';
import { ATTEMPT_ERRORS } from '../../domain/webhooks/error-class';

export class AddressNotAllowedError extends Error {
  readonly code = 'EADDRNOTALLOWED';

  /** The refused address: for the caller's own choice of words (an attachment's reason names none). */
  constructor(
    message: string,
    readonly address = '',
  ) {
    super(message);
  }
}

/** Every address a host resolves to must be public; one private answer refuses the whole host. */
export function refusedAddress(addresses: readonly LookupAddress[]): string | null {
  return addresses.find((a) => !isPublicAddress(a.address))?.address ?? null;
}

/**
 * `alwaysRefused`: addresses refused even when private ones are allowed (attachments refuse metadata endpoints).
 */
export function guardedLookup(allowPrivate: boolean, alwaysRefused?: (address: string) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 4);
      const refused =
        (alwaysRefused && addresses.find((a) => alwaysRefused(a.address))?.address) ||
        (allowPrivate ? null : refusedAddress(addresses));
      if (refused)
        return callback(
          new AddressNotAllowedError(ATTEMPT_ERRORS.addressNotAllowed(hostname, refused), refused),
          '',
          4,
        );
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
      callback(null, first.address, first.family);
    });
  };
}
