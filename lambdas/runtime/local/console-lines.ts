// The local runtime's console for people: a log line (the JSON object Powertools would print) as one short line
// of text. An API request is `POST /v1/emails 202 12 ms`, a webhook attempt `→ wh_… attempt 1 200 34 ms
// email.delivered`, anything else its level, message and keys; warnings yellow, errors red, never a stack trace.
// Only `npm start` on a terminal uses it (console-logger.ts): the AWS functions always write JSON lines.
import { relative, sep } from 'node:path';
import { routes, STAGE } from '../../manifest';

/** `pretty`: these lines; `json`: the JSON lines the AWS functions write (SF_LOG_FORMAT). */
export type LogFormat = 'json' | 'pretty';

export interface ConsoleStyle {
  /** ANSI colours: red errors, yellow warnings, a dim time. */
  readonly color: boolean;
}

/** SF_LOG_FORMAT when set; otherwise lines for people on a terminal, JSON lines into a pipe or a file. */
export function logFormatFor(setting: LogFormat | undefined, stdoutIsTty: boolean): LogFormat {
  return setting ?? (stdoutIsTty ? 'pretty' : 'json');
}

/** Colours on a terminal; NO_COLOR (no-color.org) turns them off, FORCE_COLOR (not `0`) on. */
export function consoleColors(env: NodeJS.ProcessEnv, stdoutIsTty: boolean): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return env.FORCE_COLOR !== '0';
  return stdoutIsTty;
}

const PATHS: ReadonlyMap<string, string> = new Map(routes.map((r) => [r.id, `/${STAGE}${r.path}`]));

/** Keys every line has, or that say nothing on a terminal (the invocation's id, its cold start). */
const FRAME_KEYS = new Set(['level', 'message', 'timestamp', 'service', 'function_request_id', 'cold_start']);

type Tone = 'plain' | 'warn' | 'error';

/** One line of text for a log entry; no newline in it. */
export function renderLogLine(entry: Readonly<Record<string, unknown>>, style: ConsoleStyle): string {
  const [tone, text] =
    entry.message === 'api request'
      ? request(entry)
      : entry.message === 'webhook attempt'
        ? attempt(entry)
        : other(entry);
  const time = localTime(entry.timestamp);
  if (!style.color) return time ? `${time} ${text}` : text;
  const painted = tone === 'error' ? `${RED}${text}${RESET}` : tone === 'warn' ? `${YELLOW}${text}${RESET}` : text;
  return time ? `${DIM}${time}${RESET} ${painted}` : painted;
}

/** HH:MM:SS in the machine's time zone (the line's timestamp is UTC, as on AWS). */
function localTime(timestamp: unknown): string {
  const at = typeof timestamp === 'string' ? new Date(timestamp) : undefined;
  if (!at || Number.isNaN(at.getTime())) return '';
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

const RED = '\x1b[31m';
const YELLOW = '\x1b[33m';
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

/** `POST /v1/emails 202 12 ms`: the route's path template, never the request's path (a link's token is in it). */
function request(e: Readonly<Record<string, unknown>>): [Tone, string] {
  const status = Number(e.status);
  const path = PATHS.get(String(e.route)) ?? '(no route)';
  const tone: Tone = status >= 500 ? 'error' : status >= 400 ? 'warn' : levelTone(e.level);
  return [tone, `${e.method} ${path} ${status} ${e.duration_ms} ms`];
}

/** `→ wh_… attempt 2 503 34 ms email.delivered: HTTP 503 (will retry)`. */
function attempt(e: Readonly<Record<string, unknown>>): [Tone, string] {
  const failed = e.outcome === 'failed';
  const answer = e.status_code ?? e.error_class ?? 'no answer';
  let text = `→ ${e.webhook_id} attempt ${e.attempt} ${answer} ${e.duration_ms} ms ${e.event_type}`;
  if (failed && e.error) text += `: ${e.error}`;
  const notes: string[] = [];
  if (e.kind === 'manual') notes.push('manual retry');
  if (e.kind === 'test') notes.push('test event');
  if (failed && e.delivery_status === 'pending') notes.push('will retry');
  if (failed && e.delivery_status === 'failed') notes.push('delivery failed');
  if (e.recorded === false) notes.push('not recorded: its claim had lapsed');
  if (notes.length > 0) text += ` (${notes.join('; ')})`;
  return [failed ? 'error' : levelTone(e.level), text];
}

/** `WARN message key=value …`, the level left out at INFO; an error as its message and where it was thrown. */
function other(e: Readonly<Record<string, unknown>>): [Tone, string] {
  const level = String(e.level ?? 'INFO');
  let text = level === 'INFO' ? String(e.message) : `${level} ${e.message}`;
  const keys: string[] = [];
  for (const [key, value] of Object.entries(e)) {
    if (FRAME_KEYS.has(key) || value === undefined || value === null) continue;
    if (key === 'error' && isLoggedError(value)) text += `: ${describeError(value)}`;
    else keys.push(`${key}=${scalar(value)}`);
  }
  return [levelTone(level), keys.length > 0 ? `${text} ${keys.join(' ')}` : text];
}

function levelTone(level: unknown): Tone {
  if (level === 'ERROR' || level === 'CRITICAL') return 'error';
  return level === 'WARN' ? 'warn' : 'plain';
}

/** An Error as Powertools' formatter writes it: name, location, message, stack. */
interface LoggedError {
  readonly name?: string;
  readonly message: string;
  readonly location?: string;
}

function isLoggedError(value: unknown): value is LoggedError {
  return typeof value === 'object' && value !== null && typeof (value as LoggedError).message === 'string';
}

function describeError(error: LoggedError): string {
  const named = error.name && error.name !== 'Error' ? `${error.name}: ${error.message}` : error.message;
  return error.location ? `${named} (${shortLocation(error.location)})` : named;
}

/** A location under the working directory (the repository, for `npm start`) relative to it. */
function shortLocation(location: string): string {
  const cwd = process.cwd();
  return location.startsWith(`${cwd}${sep}`) ? relative(cwd, location) : location;
}

/** A value on one line: bare when it has no space or quote, else JSON (quoted, escaped). */
function scalar(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
