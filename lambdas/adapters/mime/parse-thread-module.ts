// Where the parse thread's module is: in a Lambda bundle, parse-thread.mjs beside the bundle's index.mjs (the
// inbound function's bundling builds it, lib/constructs/inbound-mail.ts); from source (the local runtime, tests),
// parse-thread.ts beside this file, run with tsx. import.meta.url is this file's URL from source and the
// bundle's own once esbuild has inlined this module, so one look answers both.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The bundled module's file name (the inbound function's bundling writes it). */
export const PARSE_THREAD_BUNDLE = 'parse-thread.mjs';

export function parseThreadModule(): { readonly worker: URL; readonly execArgv: readonly string[] } {
  const bundled = new URL(`./${PARSE_THREAD_BUNDLE}`, import.meta.url);
  if (existsSync(fileURLToPath(bundled))) return { worker: bundled, execArgv: [] };
  return { worker: new URL('./parse-thread.ts', import.meta.url), execArgv: ['--import', 'tsx'] };
}
