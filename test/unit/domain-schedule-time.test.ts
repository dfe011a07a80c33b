// Unit tests of scheduled_at's grammar (lambdas/domain/email/schedule-time.ts): ISO 8601 with a zone, Resend's
// words ("in 1 min", "tomorrow at 9am", "friday at 3pm ET"), zones and daylight saving time, what it refuses,
// and a fuzz: any text gives an instant or a problem, never a throw, and never NaN.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_SCHEDULE_TEXT, parseScheduleTime } from '../../lambdas/domain/email/schedule-time';

// Wednesday 2026-07-15 14:20:30 UTC (summer: New York is UTC-4, Paris UTC+2).
const NOW = Date.parse('2026-07-15T14:20:30.000Z');
const at = (text: string, now = NOW) => {
  const read = parseScheduleTime(text, now);
  return 'at' in read ? new Date(read.at).toISOString() : read.problem;
};

describe('scheduled_at', () => {
  it.each([
    ['2026-12-01T09:00:00Z', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01T10:00:00+01:00', '2026-12-01T09:00:00.000Z'],
    ['2026-12-01T09:00:00.123456Z', '2026-12-01T09:00:00.123Z'],
    ['2026-12-01 09:00Z', '2026-12-01T09:00:00.000Z'],
  ])('ISO 8601 %s', (text, iso) => {
    expect(at(text)).toBe(iso);
  });

  it.each([
    ['in 1 min', '2026-07-15T14:21:30.000Z'],
    ['in 1 minute', '2026-07-15T14:21:30.000Z'],
    ['In 5 Minutes', '2026-07-15T14:25:30.000Z'],
    ['in 30 seconds', '2026-07-15T14:21:00.000Z'],
    ['in an hour', '2026-07-15T15:20:30.000Z'],
    ['in 2 hours', '2026-07-15T16:20:30.000Z'],
    ['in 1 hour and 30 minutes', '2026-07-15T15:50:30.000Z'],
    ['in 1 hour 30 minutes', '2026-07-15T15:50:30.000Z'],
    ['in 2h30m', '2026-07-15T16:50:30.000Z'],
    ['in 3 days', '2026-07-18T14:20:30.000Z'],
    ['in 1 week', '2026-07-22T14:20:30.000Z'],
    ['  in   1   min  ', '2026-07-15T14:21:30.000Z'],
  ])('relative: %s', (text, iso) => {
    expect(at(text)).toBe(iso);
  });

  it.each([
    ['tomorrow at 9am', '2026-07-16T09:00:00.000Z'],
    ['tomorrow 9am', '2026-07-16T09:00:00.000Z'],
    ['tomorrow at 9 AM UTC', '2026-07-16T09:00:00.000Z'],
    ['tomorrow at 9:30pm', '2026-07-16T21:30:00.000Z'],
    ['tomorrow at 17:45', '2026-07-16T17:45:00.000Z'],
    ['tomorrow at noon', '2026-07-16T12:00:00.000Z'],
    ['tomorrow at 12am', '2026-07-16T00:00:00.000Z'],
    ['tomorrow at 12pm', '2026-07-16T12:00:00.000Z'],
    ['today at 6pm', '2026-07-15T18:00:00.000Z'],
    ['tomorrow at 9am ET', '2026-07-16T13:00:00.000Z'],
    ['tomorrow at 9am EST', '2026-07-16T14:00:00.000Z'],
    ['tomorrow at 9am PT', '2026-07-16T16:00:00.000Z'],
    ['tomorrow at 09:30 Europe/Paris', '2026-07-16T07:30:00.000Z'],
    ['tomorrow at 9am +05:30', '2026-07-16T03:30:00.000Z'],
    ['tomorrow at 9am UTC-3', '2026-07-16T12:00:00.000Z'],
    ['friday at 3pm ET', '2026-07-17T19:00:00.000Z'],
    ['Friday at 3pm', '2026-07-17T15:00:00.000Z'],
    ['on mon 10:00', '2026-07-20T10:00:00.000Z'],
    // Today is a Wednesday: its 3pm is still ahead, its 2pm is not (then next week's).
    ['wednesday at 3pm', '2026-07-15T15:00:00.000Z'],
    ['wednesday at 2pm', '2026-07-22T14:00:00.000Z'],
  ])('a day and a time: %s', (text, iso) => {
    expect(at(text)).toBe(iso);
  });

  it('follows daylight saving time in a named zone (ET in January is UTC-5)', () => {
    expect(at('tomorrow at 9am ET', Date.parse('2026-01-14T12:00:00Z'))).toBe('2026-01-15T14:00:00.000Z');
    // "tomorrow" is the zone's tomorrow: at 23:30 UTC it is already tomorrow in Tokyo.
    expect(at('tomorrow at 9am Asia/Tokyo', Date.parse('2026-07-15T23:30:00Z'))).toBe('2026-07-17T00:00:00.000Z');
  });

  it.each([
    ['soonish', /is not a time Sendflow can read: "soonish"\. Give .*"in 1 min".*"tomorrow at 9am"/],
    ['next week', /is not a time Sendflow can read/],
    ['tomorrow', /is not a time Sendflow can read/],
    ['in 1 fortnight', /is not a time Sendflow can read/],
    ['in 0 minutes', /is not a time Sendflow can read/],
    ['in 1 hour and 2 minutes and 3 seconds and 4 days', /is not a time Sendflow can read/],
    ['tomorrow at 13pm', /is not a time Sendflow can read/],
    ['tomorrow at 25:00', /is not a time Sendflow can read/],
    ['tomorrow at 9am IST', /names a time zone Sendflow does not know: "IST"/],
    ['tomorrow at 9am Mars/Olympus', /names a time zone Sendflow does not know/],
    ['2026-12-01T09:00:00', /has no time zone: add Z/],
    ['2026-02-30T09:00:00Z', /is not a real date and time/],
    ['1767258000', /is not a time Sendflow can read/],
    ['x'.repeat(MAX_SCHEDULE_TEXT + 1), /is longer than 100 characters/],
  ])('refuses %j, saying why', (text, problem) => {
    expect(at(text)).toMatch(problem);
  });

  it('reads any text to an instant or a problem, quickly, without throwing', () => {
    const near = fc.constantFrom(
      'in ',
      'tomorrow at ',
      'friday ',
      '9am',
      ' ET',
      '2026-',
      'T',
      ':',
      'Z',
      ' and ',
      '1',
      'h',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 120 }),
          fc.array(near, { maxLength: 12 }).map((p) => p.join('')),
        ),
        (text) => {
          const started = performance.now();
          const read = parseScheduleTime(text, NOW);
          expect(performance.now() - started).toBeLessThan(50);
          if ('at' in read) expect(Number.isFinite(read.at)).toBe(true);
          else expect(read.problem).toMatch(/^[a-z]/);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
