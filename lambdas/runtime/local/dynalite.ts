// The embedded DynamoDB: dynalite in a worker thread of this process (dynalite-thread.mjs), on disk or in
// memory. This side starts the thread, routes each request's answer back by id, lets requests in flight finish
// before it closes the store, and turns a thread that will not start or dies into clear errors.
import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, Worker } from 'node:worker_threads';

/** What the thread (dynalite-thread.mjs) starts with. */
interface ThreadOptions {
  /** A directory, or absent for memory. */
  readonly path?: string;
  /** A module imported in the thread before dynalite starts (a benchmark meters dynalite's index writes so). */
  readonly preload?: string;
}

/** Parent → thread: one DynamoDB request (`id` > 0), or `close` (id 0). */
interface ThreadRequest {
  readonly id: number;
  readonly target: string;
  readonly body: Uint8Array;
}

/** Thread → parent: the answer to request `id`, or (id 0) `ready`, `failed` at start, `closed`. */
type ThreadMessage = ThreadAnswer | ThreadControl;
interface ThreadAnswer {
  readonly id: number;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}
type ThreadControl =
  | { readonly id: 0; readonly ready: { readonly port: number } }
  | { readonly id: 0; readonly failed: string }
  | { readonly id: 0; readonly closed: true };

export interface LocalDynamo {
  /** The loopback HTTP endpoint, for clients outside the runtime. */
  readonly endpoint: string;
  /** Sends one DynamoDB JSON request to the thread and resolves with its answer. */
  request(target: string, body: Uint8Array): Promise<ThreadAnswer>;
  /** Lets the requests already sent finish (up to a few seconds), then closes the store and ends the thread. */
  close(): Promise<void>;
}

export class DataDirError extends Error {}

/** The data directory's lock is held by another process (a Sendflow running on it, or one still stopping). */
export class DataDirLockedError extends DataDirError {}

export interface DynaliteOptions extends Pick<ThreadOptions, 'preload'> {
  /** Called once if the thread dies on its own (not after close): every request from then on fails. */
  readonly onFailure?: (error: Error) => void;
  /**
   * How long to wait for a data directory whose lock another process holds: a Sendflow stopped a moment ago
   * may drain for up to 10 s after its terminal prompt came back. 0 (the default): fail at once.
   */
  readonly lockWaitMs?: number;
  /** Called once, when the lock is found held and waiting begins. */
  readonly onLockWait?: () => void;
}

/** LevelDB's answer when another process holds the store: "IO error: lock <dir>/LOCK: Resource temporarily…". */
const LOCK_HELD = /\block .*\/LOCK\b/;

/** How long the thread may take to start, and how long close() waits for requests in flight. */
const START_MS = 30_000;
const DRAIN_MS = 5_000;

/** How often a start waiting for the lock tries again (each try is a new thread opening the store). */
const LOCK_POLL_MS = 300;

/**
 * Starts dynalite in a worker thread. `dataDir` is a directory or `:memory:`. While another process holds the
 * directory's lock it tries again every LOCK_POLL_MS for up to `lockWaitMs`, then throws DataDirLockedError.
 */
export async function startDynalite(dataDir: string, options: DynaliteOptions = {}): Promise<LocalDynamo> {
  const deadline = Date.now() + (options.lockWaitMs ?? 0);
  let waiting = false;
  for (;;) {
    try {
      return await startOnce(dataDir, options);
    } catch (error) {
      if (!(error instanceof DataDirLockedError) || Date.now() + LOCK_POLL_MS > deadline) throw error;
      if (!waiting) options.onLockWait?.();
      waiting = true;
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    }
  }
}

async function startOnce(dataDir: string, options: DynaliteOptions): Promise<LocalDynamo> {
  const onDisk = dataDir !== ':memory:';
  if (onDisk) {
    try {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      keepPrivate(dataDir);
    } catch (error) {
      throw new DataDirError(`Cannot use data directory ${dataDir}: ${(error as Error).message}`, { cause: error });
    }
  }
  const cannotOpen = (reason: string) =>
    onDisk
      ? new (LOCK_HELD.test(reason) ? DataDirLockedError : DataDirError)(
          `Cannot open data directory ${dataDir} (${reason}); is another Sendflow running on it? ` +
            'Set SF_DATA_DIR to another directory or :memory:.',
        )
      : new Error(`The embedded DynamoDB did not start: ${reason}`);
  const workerData: ThreadOptions = {
    ...(onDisk ? { path: dataDir } : {}),
    ...(options.preload ? { preload: options.preload } : {}),
  };
  const thread = new Worker(new URL('./dynalite-thread.mjs', import.meta.url), { workerData });
  const waiting = new Map<number, { resolve(answer: ThreadAnswer): void; reject(error: Error): void }>();
  let control: { resolve(message: ThreadControl): void; reject(error: Error): void } | undefined;
  let failure: Error | undefined;
  let running = false;
  let closing: Promise<void> | undefined;
  const fail = (error: Error) => {
    if (failure) return;
    failure = new Error(`The embedded DynamoDB stopped: ${error.message}`, { cause: error });
    for (const pending of waiting.values()) pending.reject(failure);
    waiting.clear();
    control?.reject(failure);
    if (running && !closing) options.onFailure?.(failure);
  };
  thread.on('message', (message: ThreadMessage) => {
    if (message.id === 0) return control?.resolve(message as ThreadControl);
    waiting.get(message.id)?.resolve(message as ThreadAnswer);
    waiting.delete(message.id);
  });
  thread.on('error', fail);
  thread.on('exit', (code) => fail(new Error(`its thread exited (code ${code})`)));
  const controlMessage = (message?: ThreadRequest) =>
    new Promise<ThreadControl>((resolve, reject) => {
      if (failure) return reject(failure);
      control = { resolve, reject };
      if (message) thread.postMessage(message);
    });

  const started = await withTimeout(controlMessage(), START_MS).catch((error: Error) => ({
    id: 0 as const,
    failed: (error.cause as Error | undefined)?.message ?? error.message,
  }));
  if (!('ready' in started)) {
    await thread.terminate();
    throw cannotOpen('failed' in started ? started.failed : 'it did not start');
  }
  running = true;
  const inFlight = new Set<Promise<unknown>>();
  let next = 1;
  return {
    endpoint: `http://127.0.0.1:${started.ready.port}`,
    request(target, body) {
      if (failure) return Promise.reject(failure);
      if (closing) return Promise.reject(new Error('The embedded DynamoDB is closing'));
      const id = next++;
      const answer = new Promise<ThreadAnswer>((resolve, reject) => waiting.set(id, { resolve, reject }));
      // A view into a larger pool buffer would be cloned whole: send only its bytes.
      thread.postMessage({ id, target, body: body.slice() } satisfies ThreadRequest);
      const settled = answer.catch(() => {}).finally(() => inFlight.delete(settled));
      inFlight.add(settled);
      return answer;
    },
    close() {
      closing ??= (async () => {
        // dynalite would close its store under a request it is still working on: let those finish first.
        await withTimeout(Promise.all(inFlight), DRAIN_MS).catch(() => {});
        if (!failure) await controlMessage({ id: 0, target: '', body: new Uint8Array() }).catch(() => {});
        await thread.terminate();
      })();
      return closing;
    },
  };
}

/**
 * The store holds key hashes, webhook secrets and every email: only its owner may read it. The directory and
 * the files an older run left get 0700 and 0600. LevelDB creates its files later, from its own native threads,
 * with mode 0644 less the umask; a process has one umask and a worker thread cannot set it, so this process's
 * umask gains 077 (whatever else the local runtime creates from then on is private too).
 */
function keepPrivate(dataDir: string): void {
  if (isMainThread) process.umask(process.umask(0o077) | 0o077);
  chmodSync(dataDir, 0o700);
  for (const file of readdirSync(dataDir)) {
    const path = join(dataDir, file);
    const { mode } = statSync(path);
    if (mode & 0o077) chmodSync(path, mode & 0o700);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
