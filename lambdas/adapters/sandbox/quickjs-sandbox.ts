// The transformation sandbox: a webhook's `handler` run in QuickJS compiled to WebAssembly (quickjs-emscripten,
// release-sync variant). The module is loaded once per process (container) and kept; every run gets a runtime and
// context of its own (nothing one tenant's code leaves behind is seen by the next run), a memory limit, a stack
// limit, an interrupt deadline and an output bound. Nothing of the host is exposed: no function of ours is put in
// the context, no module loader is set (import() fails), and the input goes in as a JSON string literal.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import type { TransformRun, TransformRunner } from '../../app/webhooks/ports';
import { TRANSFORMATION_LIMITS, type TransformInput } from '../../domain/webhooks/transformation';

/** The WebAssembly file's name beside a Lambda bundle's index.mjs (lib/constructs/node-function.ts copies it). */
export const QUICKJS_WASM_FILE = 'quickjs.wasm';

/**
 * The module's bytes: beside the bundle (on Lambda: esbuild has inlined this file into index.mjs, so
 * import.meta.url is the bundle's), else the package's own file (the local runtime and tests, from source).
 */
function wasmBytes(): ArrayBuffer {
  const bundled = fileURLToPath(new URL(`./${QUICKJS_WASM_FILE}`, import.meta.url));
  const path = existsSync(bundled)
    ? bundled
    : createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm');
  const bytes = readFileSync(path);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

let loaded: Promise<QuickJSWASMModule> | undefined;

/** The wall-time backstop of a run, as a multiple of its CPU limit. */
const WALL_FACTOR = 20;

/** The module, loaded on first use and kept for the life of the process; a failed load is tried again next time. */
function quickjs(): Promise<QuickJSWASMModule> {
  loaded ??= newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmBinary: async () => wasmBytes() })).catch(
    (error: unknown) => {
      loaded = undefined;
      throw error;
    },
  );
  return loaded;
}

/**
 * Runs first in every context: the clock reads the attempt's fixed time (the event's: `Date.now()` and `new Date()`
 * give it; dates built from values work as usual) and Math.random throws, so a handler is a function of its input.
 */
function prelude(fixedNow: number): string {
  return `(() => {
  const RealDate = Date;
  const fixed = ${JSON.stringify(fixedNow)};
  function SandboxDate(...args) {
    if (!new.target) return new RealDate(fixed).toString();
    return args.length === 0 ? new RealDate(fixed) : new RealDate(...args);
  }
  SandboxDate.prototype = RealDate.prototype;
  SandboxDate.now = () => fixed;
  SandboxDate.parse = RealDate.parse;
  SandboxDate.UTC = RealDate.UTC;
  Object.defineProperty(RealDate.prototype, 'constructor', { value: SandboxDate, writable: true, configurable: true });
  globalThis.Date = SandboxDate;
  Math.random = () => { throw new Error('Math.random is not available: a transformation must be deterministic'); };
})();`;
}

/**
 * Calls the handler on the input and returns `[ok, text]` as a JSON string: the result's JSON, or the message of
 * what it threw. Wrapped so that what the handler returns is serialized inside the sandbox, under its limits (a
 * getter that loops, a huge result), and only a bounded string crosses to the host.
 */
function invocation(input: string): string {
  return `(() => {
  const input = JSON.parse(${JSON.stringify(input)});
  const max = ${TRANSFORMATION_LIMITS.outputBytes};
  try {
    if (typeof handler !== 'function') return '[false, "the code must define function handler(webhook)"]';
    const out = JSON.stringify(handler(input));
    if (typeof out !== 'string') return '[false, "handler must return the webhook object it was given"]';
    if (out.length > max) return '[false, ' + JSON.stringify('output too large: more than ' + max + ' characters of JSON') + ']';
    return '[true, ' + JSON.stringify(out) + ']';
  } catch (e) {
    let text;
    try { text = e instanceof Error ? e.name + ': ' + e.message : 'threw ' + String(e); } catch { text = 'threw a value that cannot be read'; }
    return '[false, ' + JSON.stringify(String(text).slice(0, 500)) + ']';
  }
})()`;
}

export class QuickJsTransformRunner implements TransformRunner {
  constructor(
    private readonly limits: Pick<
      typeof TRANSFORMATION_LIMITS,
      'cpuMs' | 'memoryBytes' | 'stackBytes'
    > = TRANSFORMATION_LIMITS,
  ) {}

  /** Loads the module now (a cold start that will run transformations may pay it before its first attempt). */
  async warm(): Promise<void> {
    await quickjs();
  }

  async check(source: string): Promise<string | null> {
    const run = await this.execute(source, null, 0);
    return run.ok ? null : run.error;
  }

  run(source: string, input: TransformInput, fixedNow: number): Promise<TransformRun> {
    return this.execute(source, JSON.stringify(input), fixedNow);
  }

  /** Defines the source in a fresh context, then (given an input) calls its handler. Never throws. */
  private async execute(source: string, input: string | null, fixedNow: number): Promise<TransformRun> {
    let module: QuickJSWASMModule;
    try {
      module = await quickjs();
    } catch (error) {
      return { ok: false, error: `sandbox unavailable (${(error as Error).message})`, cpuMs: 0 };
    }
    // The run's own CPU time: a fresh runtime and context, the source, the call (the module's load is not counted).
    const cpuStart = process.cpuUsage();
    const took = () => {
      const used = process.cpuUsage(cpuStart);
      return (used.user + used.system) / 1000;
    };
    // The deadline is CPU time (this process's, as the interrupt handler sees it every few thousand instructions):
    // a busy host or a Lambda's fractional vCPU does not fail a handler that would fit; a wall-time backstop
    // (WALL_FACTOR times the CPU limit) ends one that is starved of CPU all the same.
    const wallDeadline = performance.now() + this.limits.cpuMs * WALL_FACTOR;
    let interrupted: string | null = null;
    const runtime = module.newRuntime();
    try {
      runtime.setMemoryLimit(this.limits.memoryBytes);
      runtime.setMaxStackSize(this.limits.stackBytes);
      runtime.setInterruptHandler(() => {
        if (interrupted) return true;
        if (took() > this.limits.cpuMs) interrupted = `CPU time limit exceeded (${this.limits.cpuMs} ms)`;
        else if (performance.now() > wallDeadline)
          interrupted = `time limit exceeded (${this.limits.cpuMs * WALL_FACTOR} ms of wall time)`;
        return interrupted !== null;
      });
      const context = runtime.newContext();
      try {
        const failed = (phase: string, handle: QuickJSHandle): TransformRun => {
          const message = interrupted ?? `${phase}: ${errorText(context, handle)}`;
          handle.dispose();
          return { ok: false, error: message, cpuMs: took() };
        };
        const setup = context.evalCode(prelude(fixedNow), 'prelude.js');
        if (setup.error) return failed('sandbox', setup.error);
        setup.value.dispose();
        const defined = context.evalCode(source, 'transformation.js');
        if (defined.error) return failed('the code failed to load', defined.error);
        defined.value.dispose();
        if (input === null) {
          const kind = context.evalCode('typeof handler', 'check.js');
          if (kind.error) return failed('the code failed to load', kind.error);
          const type = context.getString(kind.value);
          kind.value.dispose();
          return type === 'function'
            ? { ok: true, output: '', cpuMs: took() }
            : { ok: false, error: 'the code must define function handler(webhook)', cpuMs: took() };
        }
        const result = context.evalCode(invocation(input), 'run.js');
        if (result.error) return failed('handler failed', result.error);
        const text = context.typeof(result.value) === 'string' ? context.getString(result.value) : '';
        result.value.dispose();
        const [ok, value] = verdictOf(text);
        if (interrupted)
          return { ok: false, error: `CPU time limit exceeded (${this.limits.cpuMs} ms)`, cpuMs: took() };
        return ok ? { ok: true, output: value, cpuMs: took() } : { ok: false, error: value, cpuMs: took() };
      } finally {
        context.dispose();
      }
    } catch (error) {
      // The module itself failed (an abort inside the WebAssembly): load a fresh one for the next run.
      loaded = undefined;
      return { ok: false, error: `sandbox failure (${(error as Error).message})`, cpuMs: took() };
    } finally {
      try {
        runtime.dispose();
      } catch {
        loaded = undefined;
      }
    }
  }
}

/** The wrapper's `[ok, text]`; anything else (a handler that replaced JSON.stringify) is a failure of the handler. */
function verdictOf(text: string): [boolean, string] {
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed) && typeof parsed[0] === 'boolean' && typeof parsed[1] === 'string')
      return [parsed[0], parsed[1]];
  } catch {}
  return [false, 'handler replaced JSON.stringify: its result cannot be read'];
}

/** The text of an error the sandbox raised (out of memory, stack overflow, a syntax error), read defensively. */
function errorText(context: QuickJSContext, handle: QuickJSHandle): string {
  try {
    const dumped: unknown = context.dump(handle);
    if (typeof dumped === 'object' && dumped !== null && 'message' in dumped) {
      const { name, message } = dumped as { name?: unknown; message?: unknown };
      return `${typeof name === 'string' ? `${name}: ` : ''}${String(message)}`.slice(0, 500);
    }
    return String(dumped).slice(0, 500);
  } catch {
    return 'an error that cannot be read';
  }
}
