// The MIME parser off the caller's event loop: one worker thread (parse-thread.ts) parses one message at a time,
// time-boxed. A parse past its budget has its thread terminated (the only way to stop code that never yields),
// and the message is parsed once more, for its header block only, in a fresh thread with a shorter budget; a
// thread that dies (out of its memory limit) is replaced the same way. So a hostile message costs this thread at
// most its budget and never the event loop the API, the workers and the dashboard share.
import { Worker } from 'node:worker_threads';
import type { MimeParser, ParsedMessage, ParseProblem } from '../../app/inbound/ports';
import type { ParseReply, ParseRequest } from './parse-thread';
import { EMPTY_EMAIL, type ParseScope } from './parsed';

/** The thread's own `READY` (parse-thread.ts), not imported: importing the module would run it here. */
const READY = 'ready';
/** How long a new thread may take to load its modules (tsx compiles them locally; a cold Lambda is slow too). */
const START_MS = 30_000;

export interface ThreadMimeParserOptions {
  /** The thread's module: parse-thread.ts run with tsx locally, its bundled .mjs in a Lambda bundle. */
  readonly worker: URL;
  /** Node options of the thread (`--import tsx` for the .ts module). */
  readonly execArgv?: readonly string[];
  /** The longest a whole parse may take. */
  readonly budgetMs: number;
  /** The longest the header-block parse that follows a time-out may take (default: min(budget, 5 s)). */
  readonly headersBudgetMs?: number;
  /** The thread's heap ceiling: a parse past it ends the thread, and counts as a failed parse. */
  readonly maxHeapMb?: number;
}

/** What ended a run in the thread other than an answer. */
type Outcome = { readonly reply: ParseReply } | { readonly timedOut: true } | { readonly died: string };

/**
 * The parser was closed (the runtime stops) while a message waited or was parsed: not the message's fault, so
 * not a partial email either. The caller fails, and the message is tried again (the local spool keeps it).
 */
export class MimeParserClosedError extends Error {
  constructor() {
    super('The MIME parser was closed before the message was parsed');
    this.name = 'MimeParserClosedError';
  }
}

export class ThreadMimeParser implements MimeParser {
  private thread: { readonly worker: Worker; readonly ready: Promise<boolean> } | null = null;
  /** One parse at a time: a time-out terminates the thread, which must not take another caller's parse with it. */
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: ThreadMimeParserOptions) {}

  parse(raw: Uint8Array): Promise<ParsedMessage> {
    const run = this.queue.then(() => this.parseNow(raw));
    this.queue = run.catch(() => {});
    return run;
  }

  /** Ends the thread (a parse in progress resolves as failed). */
  async close(): Promise<void> {
    this.closed = true;
    await this.thread?.worker.terminate();
    this.thread = null;
  }

  private async parseNow(raw: Uint8Array): Promise<ParsedMessage> {
    const whole = await this.run({ raw, scope: 'auto', problem: null }, this.options.budgetMs);
    if (this.closed) throw new MimeParserClosedError();
    if ('reply' in whole && whole.reply.ok) return whole.reply.parsed;
    const problem: ParseProblem =
      'timedOut' in whole
        ? { kind: 'timeout', budgetMs: this.options.budgetMs }
        : { kind: 'failed', reason: 'died' in whole ? whole.died : (whole.reply as { error: string }).error };
    // What could be parsed: the header block alone, in a fresh thread (the first one is gone or suspect).
    const headersBudget = this.options.headersBudgetMs ?? Math.min(this.options.budgetMs, 5_000);
    const headers = await this.run({ raw, scope: 'headers', problem }, headersBudget);
    if (this.closed) throw new MimeParserClosedError();
    if ('reply' in headers && headers.reply.ok) return headers.reply.parsed;
    return { scope: 'none', email: EMPTY_EMAIL, problem };
  }

  private async run(request: ParseRequest & { scope: ParseScope }, budgetMs: number): Promise<Outcome> {
    if (this.closed) return { died: 'the parser is closed' };
    const { worker, ready } = this.start();
    // The budget is the parse's: a thread's start (its modules loading) is bounded on its own.
    if (!(await ready)) {
      this.forget(worker);
      void worker.terminate();
      return { died: 'the parse thread did not start' };
    }
    return new Promise<Outcome>((resolve) => {
      const finish = (outcome: Outcome) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        resolve(outcome);
      };
      const onMessage = (reply: ParseReply) => finish({ reply });
      const onError = (error: Error) => {
        this.forget(worker);
        const code = (error as NodeJS.ErrnoException).code;
        finish({ died: code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'the parser ran out of memory' : error.message });
      };
      const onExit = () => {
        this.forget(worker);
        finish({ died: 'the parse thread stopped' });
      };
      const timer = setTimeout(() => {
        this.forget(worker);
        void worker.terminate();
        finish({ timedOut: true });
      }, budgetMs);
      worker.on('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
      worker.postMessage(request);
    });
  }

  private start(): { readonly worker: Worker; readonly ready: Promise<boolean> } {
    if (this.thread) return this.thread;
    const worker = new Worker(this.options.worker, {
      execArgv: [...(this.options.execArgv ?? [])],
      ...(this.options.maxHeapMb ? { resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb } } : {}),
      stdout: false,
      stderr: false,
    });
    // An idle thread does not keep the process alive (a parse in progress does: its timer is referenced).
    worker.unref();
    const ready = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), START_MS);
      const settle = (value: boolean) => {
        clearTimeout(timer);
        worker.off('message', onReady);
        resolve(value);
      };
      const onReady = (message: unknown) => message === READY && settle(true);
      worker.on('message', onReady);
      worker.once('error', () => settle(false));
      worker.once('exit', () => settle(false));
    });
    this.thread = { worker, ready };
    return this.thread;
  }

  private forget(worker: Worker): void {
    if (this.thread?.worker === worker) this.thread = null;
  }
}
