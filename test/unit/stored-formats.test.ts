// Unit tests for expand/contract's switches (lambdas/domain/stored-formats.ts): the catalog, SF_STORED_FORMATS'
// syntax, and the configuration that carries them to every store.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  defaultStoredFormats,
  describeStoredFormats,
  parseStoredFormats,
  STORED_FORMAT_NAMES,
  STORED_FORMATS,
  StoredFormatsError,
  withheldEventTypes,
} from '../../lambdas/domain/stored-formats';
import { tableEnvVar, tableNames } from '../../lambdas/manifest';
import { ConfigError, loadConfig } from '../../lambdas/runtime/config';

const TABLES = Object.fromEntries(tableNames.map((table) => [tableEnvVar(table), `prod-${table}`]));

describe('the stored formats catalog', () => {
  it('names, for each format, what it is, the first commit that reads it and whether this release writes it by default', () => {
    expect(STORED_FORMAT_NAMES).toEqual(['deliveryShards', 'deliveryPayloadZ1', 'suppressionEvents']);
    for (const name of STORED_FORMAT_NAMES) {
      const format = STORED_FORMATS[name];
      expect(format.summary.length).toBeGreaterThan(20);
      expect(format.readSince).toMatch(/^[0-9a-f]{7,40}$/);
      expect(typeof format.writtenByDefault).toBe('boolean');
    }
  });

  it('writes by default what the release before this one (c65cb50) reads: all three formats', () => {
    expect(defaultStoredFormats()).toEqual({ deliveryShards: true, deliveryPayloadZ1: true, suppressionEvents: true });
  });

  it('holds back suppression.added and suppression.removed while suppressionEvents is off, and only then', () => {
    expect(withheldEventTypes(defaultStoredFormats())).toEqual([]);
    expect(withheldEventTypes(parseStoredFormats('suppressionEvents=off'))).toEqual([
      'suppression.added',
      'suppression.removed',
    ]);
  });

  // A shallow clone lacks the history to ask (check:rollback deepens it, as CI runs it first).
  const shallow =
    spawnSync('git', ['rev-parse', '--is-shallow-repository'], { encoding: 'utf8' }).stdout.trim() !== 'false';
  it.skipIf(shallow)(
    'writes by default only formats that the release CI rolls back to (.ci/previous-release) reads',
    () => {
      const previous = readFileSync('.ci/previous-release', 'utf8')
        .split('\n')
        .find((line) => line.trim() && !line.startsWith('#'))
        ?.trim();
      expect(previous).toMatch(/^[0-9a-f]{7,40}$/);
      for (const name of STORED_FORMAT_NAMES.filter((n) => STORED_FORMATS[n].writtenByDefault)) {
        const reader = STORED_FORMATS[name].readSince;
        expect(
          spawnSync('git', ['merge-base', '--is-ancestor', reader, String(previous)]).status,
          `${name} is read since ${reader}`,
        ).toBe(0);
      }
    },
  );
});

describe('parseStoredFormats (SF_STORED_FORMATS, `name=on|off` separated by commas)', () => {
  it('keeps every default when empty or absent', () => {
    expect(parseStoredFormats(undefined)).toEqual(defaultStoredFormats());
    expect(parseStoredFormats('')).toEqual(defaultStoredFormats());
    expect(parseStoredFormats('  ')).toEqual(defaultStoredFormats());
  });

  it('switches the named formats and keeps the defaults of the others', () => {
    expect(parseStoredFormats('deliveryShards=off')).toEqual({
      deliveryShards: false,
      deliveryPayloadZ1: true,
      suppressionEvents: true,
    });
    expect(parseStoredFormats(' deliveryPayloadZ1 = off , deliveryShards=on ')).toEqual({
      deliveryShards: true,
      deliveryPayloadZ1: false,
      suppressionEvents: true,
    });
  });

  it('refuses an unknown format or value, naming every problem and the known formats', () => {
    expect(() => parseStoredFormats('deliveryShard=off,deliveryPayloadZ1=no')).toThrow(StoredFormatsError);
    try {
      parseStoredFormats('deliveryShard=off,deliveryPayloadZ1=no,deliveryShards');
    } catch (error) {
      const { message } = error as Error;
      expect(message).toContain('unknown stored format deliveryShard');
      expect(message).toContain('deliveryPayloadZ1=no: the value must be on or off');
      expect(message).toContain('deliveryShards: write name=on or name=off');
      expect(message).toContain('deliveryShards, deliveryPayloadZ1, suppressionEvents');
    }
  });

  it('refuses a format named twice', () => {
    expect(() => parseStoredFormats('deliveryShards=off,deliveryShards=on')).toThrow(/named twice/);
  });

  it('writes switches back in the same syntax, only those that differ from the defaults', () => {
    expect(describeStoredFormats({ deliveryShards: false, deliveryPayloadZ1: true, suppressionEvents: true })).toBe(
      'deliveryShards=off',
    );
    expect(describeStoredFormats(defaultStoredFormats())).toBe('');
    const all = { deliveryShards: false, deliveryPayloadZ1: false, suppressionEvents: false };
    expect(parseStoredFormats(describeStoredFormats(all))).toEqual(all);
  });
});

describe('loadConfig', () => {
  it('carries the switches as storedFormats, frozen; defaults without SF_STORED_FORMATS', () => {
    expect(loadConfig({ ...TABLES }).storedFormats).toEqual(defaultStoredFormats());
    const config = loadConfig({ ...TABLES, SF_STORED_FORMATS: 'deliveryShards=off' });
    expect(config.storedFormats).toEqual({ deliveryShards: false, deliveryPayloadZ1: true, suppressionEvents: true });
    expect(Object.isFrozen(config.storedFormats)).toBe(true);
  });

  it('lists a bad SF_STORED_FORMATS with the other problems', () => {
    try {
      loadConfig({ ...TABLES, SF_STORED_FORMATS: 'nope=on', PORT: 'x' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems).toContain('SF_STORED_FORMATS: unknown stored format nope');
      expect(problems).toContain('PORT');
    }
  });
});
