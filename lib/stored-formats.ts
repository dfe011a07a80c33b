// `sendflow:storedFormats`: each stage's expand/contract switches (lambdas/domain/stored-formats.ts), committed in
// cdk.json so every deploy of the stage keeps them, e.g. {"prod": {"deliveryShards": false}} to keep writing what
// an older release reads. Read at synth, refused with every problem at once, and handed to every function as
// SF_STORED_FORMATS. A stage without an entry writes this release's defaults.
import {
  describeStoredFormats,
  parseStoredFormats,
  STORED_FORMAT_NAMES,
  type StoredFormats,
} from '../lambdas/domain/stored-formats';
import { contextObject } from './context-object';

export const CONTEXT_STORED_FORMATS = 'sendflow:storedFormats';
const EXAMPLE = '{"prod": {"deliveryShards": false}}';

/** The stage's switches over this release's defaults; the defaults when the stage has no entry. */
export function parseStoredFormatsContext(raw: unknown, stage: string): StoredFormats {
  if (raw === undefined) return parseStoredFormats(undefined);
  const stages = contextObject(raw, CONTEXT_STORED_FORMATS, EXAMPLE);
  const problems: string[] = [];
  const parsed = new Map<string, string>();
  for (const [name, entry] of Object.entries(stages)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`${name} must be an object such as {"deliveryShards": false}, got ${JSON.stringify(entry)}`);
      continue;
    }
    const pairs: string[] = [];
    for (const [format, on] of Object.entries(entry)) {
      if (!(STORED_FORMAT_NAMES as string[]).includes(format)) {
        problems.push(`${name}: unknown stored format ${format} (known: ${STORED_FORMAT_NAMES.join(', ')})`);
      } else if (typeof on !== 'boolean') problems.push(`${name}: ${format} must be true or false, got ${String(on)}`);
      else pairs.push(`${format}=${on ? 'on' : 'off'}`);
    }
    parsed.set(name, pairs.join(','));
  }
  if (problems.length) throw new Error(`Context ${CONTEXT_STORED_FORMATS}: ${problems.join('; ')}`);
  return parseStoredFormats(parsed.get(stage));
}

/** SF_STORED_FORMATS for the stage's functions: only what differs from the defaults ('' when nothing does). */
export const storedFormatsVariable = (formats: StoredFormats) => describeStoredFormats(formats);
