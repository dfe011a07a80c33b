// `scheduled_at` as Resend takes it: an ISO 8601 date-time with a time zone, or a few words ("in 1 min", "in 2
// hours", "tomorrow at 9am", "friday at 3pm ET"). A small strict grammar rather than a natural-language library:
// every form it reads is listed in docs/sending.md, nothing else is guessed at (a library that finds a date in
// any sentence would schedule "send it in a bit" at some time nobody asked for), it reads at most 100 characters
// with anchored, linear patterns, and it needs no dependency. Time comes in as `now`: the clock port's.

/** The longest value read; past it, a 422 without looking further. */
export const MAX_SCHEDULE_TEXT = 100;

/** Examples the 422 gives for a value it cannot read. */
export const SCHEDULE_EXAMPLES = [
  '2026-12-01T09:00:00Z',
  'in 1 min',
  'in 2 hours',
  'tomorrow at 9am',
  'friday at 3pm ET',
  'tomorrow at 09:30 Europe/Paris',
] as const;

export type ScheduleTime = { readonly at: number } | { readonly problem: string };

const UNITS: ReadonlyArray<readonly [RegExp, number]> = [
  [/^(s|secs?|seconds?)$/, 1_000],
  [/^(m|mins?|minutes?)$/, 60_000],
  [/^(h|hrs?|hours?)$/, 3_600_000],
  [/^(d|days?)$/, 86_400_000],
  [/^(w|wks?|weeks?)$/, 7 * 86_400_000],
];

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const WEEKDAY_SHORT = /^(sun|mon|tue|tues|wed|thu|thur|thurs|fri|sat)$/;

/**
 * Zone abbreviations in common use. The bare region names (ET, CT, MT, PT) follow daylight saving time; the
 * lettered ones are fixed offsets, as defined (EST is -05:00 even in July). Ambiguous ones (IST) are not taken.
 */
const ZONES: Readonly<Record<string, string>> = {
  utc: '+00:00',
  gmt: '+00:00',
  z: '+00:00',
  et: 'America/New_York',
  est: '-05:00',
  edt: '-04:00',
  ct: 'America/Chicago',
  cst: '-06:00',
  cdt: '-05:00',
  mt: 'America/Denver',
  mst: '-07:00',
  mdt: '-06:00',
  pt: 'America/Los_Angeles',
  pst: '-08:00',
  pdt: '-07:00',
  hst: '-10:00',
  wet: '+00:00',
  west: '+01:00',
  bst: '+01:00',
  cet: '+01:00',
  cest: '+02:00',
  eet: '+02:00',
  eest: '+03:00',
  jst: '+09:00',
  aest: '+10:00',
  aedt: '+11:00',
};

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

/** The instant `text` names at `now`, or what is wrong with it. Whether it is in the future is the caller's rule. */
export function parseScheduleTime(text: string, now: number): ScheduleTime {
  if (text.length > MAX_SCHEDULE_TEXT) return { problem: `is longer than ${MAX_SCHEDULE_TEXT} characters.` };
  const trimmed = text.trim();
  const iso = ISO.exec(trimmed);
  if (iso) return isoTime(iso);
  const words = trimmed.toLowerCase().replace(/\s+/g, ' ');
  const relative = relativeTime(words, now);
  if (relative) return relative;
  const absolute = dayAndTime(trimmed.replace(/\s+/g, ' '), now);
  if (absolute) return absolute;
  return { problem: unreadable(text) };
}

/** The forms, in words, for a 422. */
export const SCHEDULE_FORMS = `an ISO 8601 date-time with a time zone, or words, e.g. ${SCHEDULE_EXAMPLES.map((e) => `"${e}"`).join(', ')} (no time zone: UTC)`;

/** The 422's words for a value none of the forms reads. */
export function unreadable(text: string): string {
  const shown = JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
  return `is not a time Sendflow can read: ${shown}. Give ${SCHEDULE_FORMS}.`;
}

function isoTime(m: RegExpExecArray): ScheduleTime {
  const [, y, mo, d, h, mi, s = '0', fraction = '', zulu, sign, oh, om] = m;
  if (!zulu && !sign)
    return {
      problem: `has no time zone: add Z (UTC) or an offset such as +01:00, e.g. "${m[0]}Z".`,
    };
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as number[];
  const offsetMinutes = sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) : 0;
  const local = Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 1, hour ?? 0, minute ?? 0, second ?? 0);
  const check = new Date(local);
  if (
    check.getUTCMonth() !== (month ?? 1) - 1 ||
    check.getUTCDate() !== day ||
    (hour ?? 0) > 23 ||
    (minute ?? 0) > 59 ||
    (second ?? 0) > 59 ||
    Number(oh ?? 0) > 23 ||
    Number(om ?? 0) > 59
  )
    return { problem: `is not a real date and time: "${m[0]}".` };
  const millis = Number(`0.${fraction || '0'}`) * 1000;
  return { at: local + Math.floor(millis) - offsetMinutes * 60_000 };
}

/** "in 5 minutes", "in an hour", "in 1 hour and 30 minutes", "in 2h30m": at most three parts. */
function relativeTime(words: string, now: number): ScheduleTime | null {
  const match = /^in (.{1,80})$/.exec(words);
  if (!match?.[1]) return null;
  const parts = match[1].split(/ and |, | (?=\d|an? |one )|(?<=[a-z])(?=\d)/);
  if (parts.length > 3) return null;
  let total = 0;
  for (const part of parts) {
    const piece = /^(\d{1,6}|an?|one) ?([a-z]{1,7})$/.exec(part.trim());
    if (!piece?.[1] || !piece[2]) return null;
    const unit = UNITS.find(([pattern]) => pattern.test(piece[2] as string));
    if (!unit) return null;
    const count = /^\d/.test(piece[1]) ? Number(piece[1]) : 1;
    total += count * unit[1];
  }
  if (total <= 0) return null;
  return { at: now + total };
}

/**
 * "tomorrow at 9am", "today 17:30 UTC", "friday at 3pm ET", "mon 09:00 Europe/Paris": a day, an optional "at", a
 * time and an optional zone (UTC without one). A weekday is the next one whose time is still ahead (today's, if
 * it is). `text` keeps its case, for an IANA zone name.
 */
function dayAndTime(text: string, now: number): ScheduleTime | null {
  const match =
    /^(?:on )?([A-Za-z]{3,9}) (?:at )?(\d{1,2}(?::\d{2})? ?(?:[ap]\.?m\.?)?|noon|midnight)(?: ([A-Za-z_/+:\-0-9]{1,40}))?$/i.exec(
      text,
    );
  if (!match?.[1] || !match[2]) return null;
  const day = match[1].toLowerCase();
  const time = clockTime(match[2].toLowerCase());
  if (!time) return null;
  const zone = match[3] === undefined ? '+00:00' : zoneOf(match[3]);
  if (!zone)
    return {
      problem: `names a time zone Sendflow does not know: "${match[3]}". Use UTC, an offset such as +01:00, or a name such as Europe/Paris.`,
    };
  const weekday = weekdayOf(day);
  if (day !== 'today' && day !== 'tomorrow' && weekday === null) return null;
  const today = localDate(now, zone);
  for (let ahead = 0; ahead < 8; ahead++) {
    if (day === 'today' && ahead > 0) break;
    if (day === 'tomorrow' && ahead !== 1) continue;
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + ahead));
    if (weekday !== null && date.getUTCDay() !== weekday) continue;
    const at = instant(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), time.hour, time.minute, zone);
    if (weekday !== null && at <= now) continue;
    return { at };
  }
  return null;
}

function weekdayOf(day: string): number | null {
  const full = WEEKDAYS.indexOf(day);
  if (full >= 0) return full;
  if (!WEEKDAY_SHORT.test(day)) return null;
  return WEEKDAYS.findIndex((name) => name.startsWith(day.slice(0, 3)));
}

/** "9am", "9 pm", "9:30am", "09:30", "21:00", "9" (09:00), "noon", "midnight". */
function clockTime(text: string): { hour: number; minute: number } | null {
  if (text === 'noon') return { hour: 12, minute: 0 };
  if (text === 'midnight') return { hour: 0, minute: 0 };
  const m = /^(\d{1,2})(?::(\d{2}))? ?(?:([ap])\.?m\.?)?$/.exec(text);
  if (!m?.[1]) return null;
  const hour = Number(m[1]);
  const minute = Number(m[2] ?? '0');
  if (minute > 59) return null;
  if (m[3]) {
    if (hour < 1 || hour > 12) return null;
    return { hour: (hour % 12) + (m[3] === 'p' ? 12 : 0), minute };
  }
  if (hour > 23) return null;
  return { hour, minute };
}

/** A zone as `+hh:mm` or an IANA name Intl knows; null when it is neither. */
function zoneOf(text: string): string | null {
  const lower = text.toLowerCase();
  if (Object.hasOwn(ZONES, lower)) return ZONES[lower] as string;
  const offset = /^(?:utc|gmt)?([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(lower);
  if (offset) {
    const [, sign, h = '0', m = '00'] = offset;
    if (Number(h) > 14 || Number(m) > 59) return null;
    return `${sign}${h.padStart(2, '0')}:${m}`;
  }
  if (!/^[A-Za-z_]+(?:\/[A-Za-z0-9_+-]+){1,2}$/.test(text)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: text }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** Minutes east of UTC in `zone` at `at`. */
function offsetMinutes(zone: string, at: number): number {
  const fixed = /^([+-])(\d{2}):(\d{2})$/.exec(zone);
  if (fixed) return (fixed[1] === '-' ? -1 : 1) * (Number(fixed[2]) * 60 + Number(fixed[3]));
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'));
  return Math.round((wall - Math.floor(at / 60_000) * 60_000) / 60_000);
}

function localDate(now: number, zone: string): { year: number; month: number; day: number } {
  const wall = new Date(now + offsetMinutes(zone, now) * 60_000);
  return { year: wall.getUTCFullYear(), month: wall.getUTCMonth() + 1, day: wall.getUTCDate() };
}

/** The instant of a wall-clock time in `zone` (twice refined, so a daylight-saving change between is right). */
function instant(year: number, month: number, day: number, hour: number, minute: number, zone: string): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  let at = wall - offsetMinutes(zone, wall) * 60_000;
  at = wall - offsetMinutes(zone, at) * 60_000;
  return at;
}
