// Expand/contract for stored formats (docs/deploy-and-operate.md, "Every release can be rolled back"): a new
// way of storing something is first *read* by one release and *written* only by a later one, so the release before
// any deploy always reads what the deploy writes, and a rollback (by a person, or CloudFormation's own) finds nothing
// it cannot read. Each format that changes so has a switch here: its writer writes the new format only while the
// switch is on. A switch's default turns on in the release after the one that first reads the format (its
// `readSince`); until then a stage may turn it on itself once it will never roll back past that reader, and a
// stage may keep one off to stay able to roll back further. Per stage: `sendflow:storedFormats` in cdk.json, which
// reaches every function as SF_STORED_FORMATS (`deliveryShards=off,...`); locally that variable itself.
// A change an older release skips by construction (a new attribute or entry its reader ignores) needs no switch:
// `npm run check:rollback -- <previous release>` proves the skip, as it proves everything else.

export interface StoredFormat {
  /** What is stored differently when the switch is on. */
  readonly summary: string;
  /** The first commit whose code reads the format (and every stored form before it): releases from it on read it. */
  readonly readSince: string;
  /** Whether this release writes it unless a stage says otherwise: only once the release before reads it. */
  readonly writtenByDefault: boolean;
}

export const STORED_FORMATS = {
  deliveryShards: {
    summary:
      "New delivery rows go to their webhook's 16 shard partitions (`webhookId#n`) instead of its one partition " +
      '(`webhookId`); rows of either layout are read, claimed and recorded where they are.',
    readSince: '587757a',
    writtenByDefault: true,
  },
  deliveryPayloadZ1: {
    summary:
      "A delivery row's payload is stored deflated against the v1 preset dictionary (`payloadZ1`) instead of as " +
      'the string (`payload`); rows of either form are read.',
    readSince: '5f3f283',
    writtenByDefault: true,
  },
  suppressionEvents: {
    summary:
      "suppression.added and suppression.removed are recorded (suppression items' outboxes, the events queue, " +
      "delivery rows) and webhooks and listen sessions may subscribe to them; a removed suppression's item stays " +
      'as a tombstone until its event is relayed. Releases before read no such event type, webhook or tombstone.',
    readSince: 'efc9c37',
    writtenByDefault: true,
  },
} as const satisfies Record<string, StoredFormat>;

/** Event types a stored format holds back while its switch is off: not recorded, not subscribable. */
export const SWITCHED_EVENT_TYPES: Readonly<Partial<Record<StoredFormatName, readonly string[]>>> = {
  suppressionEvents: ['suppression.added', 'suppression.removed'],
};

/** The stored format whose switch holds `type` back, if one does. */
export function switchOf(type: string): StoredFormatName | undefined {
  return STORED_FORMAT_NAMES.find((name) => SWITCHED_EVENT_TYPES[name]?.includes(type));
}

/** The event types `formats` hold back (none when every switch that holds some is on). */
export function withheldEventTypes(formats: StoredFormats): string[] {
  return STORED_FORMAT_NAMES.filter((name) => !formats[name]).flatMap((name) => SWITCHED_EVENT_TYPES[name] ?? []);
}

export type StoredFormatName = keyof typeof STORED_FORMATS;
/** Which formats are written: one switch per format of the catalog. */
export type StoredFormats = Readonly<Record<StoredFormatName, boolean>>;

export const STORED_FORMAT_NAMES = Object.keys(STORED_FORMATS) as StoredFormatName[];

export class StoredFormatsError extends Error {
  override readonly name = 'StoredFormatsError';
}

/** This release's defaults. */
export function defaultStoredFormats(): StoredFormats {
  return Object.fromEntries(STORED_FORMAT_NAMES.map((name) => [name, STORED_FORMATS[name].writtenByDefault])) as Record<
    StoredFormatName,
    boolean
  >;
}

const isFormat = (name: string): name is StoredFormatName => Object.hasOwn(STORED_FORMATS, name);

/**
 * `name=on|off` pairs separated by commas (SF_STORED_FORMATS) over this release's defaults. Throws one error that
 * lists every problem (an unknown name, a bad value, a name given twice) and the known names.
 */
export function parseStoredFormats(raw: string | undefined): StoredFormats {
  const formats: Record<StoredFormatName, boolean> = { ...defaultStoredFormats() };
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const pair of (raw ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const [name = '', value, ...rest] = pair.split('=').map((part) => part.trim());
    if (value === undefined || rest.length) problems.push(`${pair.trim()}: write name=on or name=off`);
    else if (!isFormat(name)) problems.push(`unknown stored format ${name}`);
    else if (value !== 'on' && value !== 'off') problems.push(`${name}=${value}: the value must be on or off`);
    else if (seen.has(name)) problems.push(`${name} is named twice`);
    else formats[name] = value === 'on';
    seen.add(name);
  }
  if (problems.length) {
    throw new StoredFormatsError(`${problems.join('; ')} (stored formats: ${STORED_FORMAT_NAMES.join(', ')})`);
  }
  return formats;
}

/** The switches that differ from this release's defaults, in SF_STORED_FORMATS' syntax ('' when none does). */
export function describeStoredFormats(formats: StoredFormats): string {
  const defaults = defaultStoredFormats();
  return STORED_FORMAT_NAMES.filter((name) => formats[name] !== defaults[name])
    .map((name) => `${name}=${formats[name] ? 'on' : 'off'}`)
    .join(',');
}
