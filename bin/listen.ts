// `npm run listen -- --forward-to http://127.0.0.1:PORT/path [--events a,b]`: forwards the account's events, live,
// to a local URL with no inbound connection to the laptop. It opens a listen session (SENDFLOW_API_KEY, against
// SENDFLOW_API_URL: the running local runtime by default), long-polls it, and POSTs each event to --forward-to
// signed with the session's secret exactly as a webhook delivery is (lambdas/domain/webhooks/render.ts).
// One line per event with the local answer's status; Ctrl-C ends the session and exits 0.
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { attemptHeaders } from '../lambdas/domain/webhooks/render';
import { runningLocalRuntime } from './local-state';

const USAGE = `usage: SENDFLOW_API_KEY=sf_… npm run listen -- --forward-to http://127.0.0.1:4000/webhooks [--events a,b]

Forwards your account's events (in the key's mode) to a local URL, signed like a webhook delivery with the
signing secret it prints. SENDFLOW_API_URL: the API's base URL, /v1 included (default: the running local runtime).
The key needs the webhook:write scope. Ctrl-C ends the session.`;

/** A local endpoint gets this long to answer (a webhook attempt's time-out). */
const FORWARD_TIMEOUT_MS = 10_000;
/** Event ids remembered to drop a redelivered event (the fan-out may put an event on a session twice). */
const SEEN_IDS = 1_000;

const sessionAnswer = z.object({ id: z.string(), signing_secret: z.string(), events: z.array(z.string()).nullable() });
const pollAnswer = z.object({
  data: z.array(z.object({ id: z.string(), type: z.string(), payload: z.string() })),
  next_after: z.string().nullable(),
});

/** A usage problem: told with the usage, exit 2. */
class ExitError extends Error {}

function options(argv: readonly string[]) {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: { 'forward-to': { type: 'string' }, events: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) return 'help' as const;
  const target = values['forward-to'];
  if (!target || !/^https?:\/\//.test(target) || !URL.canParse(target)) {
    throw new ExitError('--forward-to must be an http(s) URL, e.g. http://127.0.0.1:4000/webhooks');
  }
  const events = values.events
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return { target, events };
}

async function main(): Promise<number> {
  const opts = options(process.argv.slice(2));
  if (opts === 'help') {
    console.log(USAGE);
    return 0;
  }
  const key = process.env.SENDFLOW_API_KEY;
  if (!key) throw new ExitError('Set SENDFLOW_API_KEY to a key with the webhook:write scope.');
  const api = (process.env.SENDFLOW_API_URL ?? runningLocalRuntime()?.url ?? 'http://127.0.0.1:3000/v1').replace(
    /\/+$/,
    '',
  );
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${api}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null, headers: res.headers };
  };

  const created = await call('/listen-sessions', {
    method: 'POST',
    body: JSON.stringify(opts.events ? { events: opts.events } : {}),
  });
  if (created.status !== 201) throw new Error(`Could not open a listen session: ${describe(created)}`);
  const session = sessionAnswer.parse(created.body);
  console.log(`Signing secret: ${session.signing_secret}`);
  console.log(
    `Ready! Forwarding ${session.events ? session.events.join(', ') : 'every event'} to ${opts.target} ` +
      `(session ${session.id}, ${api}). Ctrl-C to stop.`,
  );

  const stop = new AbortController();
  const ended = new Promise<number>((resolve) => {
    process.once('SIGINT', () => {
      stop.abort();
      void call(`/listen-sessions/${session.id}`, { method: 'DELETE' })
        .then((res) => console.log(res.status === 200 ? 'Session ended.' : `Session end: ${describe(res)}`))
        .catch((error: unknown) => console.error(`Session end failed: ${String(error)}`))
        .finally(() => resolve(0));
    });
  });
  const code = await pollLoop(api, key, session, opts.target, stop.signal);
  // Stopped by Ctrl-C: exit once the session is ended, not before.
  return stop.signal.aborted ? ended : code;
}

async function pollLoop(
  api: string,
  key: string,
  session: z.infer<typeof sessionAnswer>,
  target: string,
  signal: AbortSignal,
): Promise<number> {
  let after: string | null = null;
  let pause = 1_000;
  const seen = new Set<string>();
  while (!signal.aborted) {
    let res: Response;
    try {
      const query = after ? `?after=${encodeURIComponent(after)}` : '';
      res = await fetch(`${api}/listen-sessions/${session.id}/events${query}`, {
        headers: { Authorization: `Bearer ${key}` },
        signal,
      });
    } catch (error) {
      if (signal.aborted) break;
      console.error(`Poll failed (${String(error)}); retrying in ${pause / 1000} s`);
      await sleep(pause, signal);
      pause = Math.min(pause * 2, 30_000);
      continue;
    }
    const text = await res.text();
    if (res.status === 404) {
      console.error(`The listen session ended (not polled for too long?): ${text}`);
      return 1;
    }
    if (res.status !== 200) {
      const wait = Number(res.headers.get('retry-after')) * 1000 || pause;
      console.error(`Poll answered ${res.status}: ${text}; retrying in ${wait / 1000} s`);
      await sleep(wait, signal);
      pause = Math.min(pause * 2, 30_000);
      continue;
    }
    pause = 1_000;
    const page = pollAnswer.parse(JSON.parse(text));
    for (const event of page.data) {
      if (signal.aborted) break;
      if (seen.has(event.id)) continue;
      seen.add(event.id);
      if (seen.size > SEEN_IDS) seen.delete(seen.values().next().value as string);
      console.log(
        `${new Date().toISOString()}  ${event.type}  ${event.id}  -> ${await forward(target, session, event)}`,
      );
    }
    after = page.next_after ?? after;
    // A stage whose polls answer at once (AWS: SF_LISTEN_MAX_WAIT_SECONDS=0) is asked again a second later.
    if (!page.data.length) await sleep(1_000, signal);
  }
  return 0;
}

/** POSTs one event as a webhook attempt would be made: same body, same headers, a fresh signature. */
async function forward(
  target: string,
  session: { readonly signing_secret: string },
  event: { readonly id: string; readonly payload: string },
): Promise<string> {
  try {
    const res = await fetch(target, {
      method: 'POST',
      headers: attemptHeaders('standard', [session.signing_secret], event.id, event.payload, Date.now()),
      body: event.payload,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await res.body?.cancel();
    return `${res.status} ${res.statusText}`.trim();
  } catch (error) {
    return `failed: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`;
  }
}

function describe(res: { status: number; body: unknown }): string {
  return `${res.status} ${JSON.stringify(res.body)}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // Bad arguments or settings (ours, or node:util's parseArgs): the message and the usage, exit 2. Anything else
    // (the API unreachable, an answer we cannot read): the message, exit 1.
    const usage = error instanceof ExitError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    console.error(`sendflow listen: ${error instanceof Error ? error.message : String(error)}`);
    if (usage) console.error(USAGE);
    process.exit(usage ? 2 : 1);
  },
);
