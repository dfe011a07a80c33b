// The parse thread's entry point (ThreadMimeParser starts it): takes one message at a time, parses it bounded
// (bounded-parse.ts) and posts the result back, attachment bytes transferred rather than copied. Nothing else
// runs here, so the thread can be terminated at any moment without losing anything but the parse.
import { parentPort } from 'node:worker_threads';
import type { ParsedMessage } from '../../app/inbound/ports';
import { parseBounded } from './bounded-parse';
import type { ParseScope } from './parsed';

/** Parent → thread. */
export interface ParseRequest {
  readonly raw: Uint8Array;
  readonly scope: ParseScope;
  readonly problem: ParsedMessage['problem'];
}

/** Thread → parent: `ready` once, when its modules are loaded, then one reply per request. */
export type ParseReply =
  | { readonly ok: true; readonly parsed: ParsedMessage }
  | { readonly ok: false; readonly error: string };
export const READY = 'ready';

const port = parentPort;
if (!port) throw new Error('parse-thread.ts runs as a worker thread (ThreadMimeParser starts it)');

port.on('message', (request: ParseRequest) => {
  parseBounded(request.raw, request.scope, undefined, request.problem).then(
    (parsed) => {
      const buffers = new Set<ArrayBuffer>();
      for (const attachment of parsed.email.attachments) {
        const { content } = attachment;
        if (content instanceof ArrayBuffer) buffers.add(content);
        else if (content instanceof Uint8Array && content.buffer instanceof ArrayBuffer) buffers.add(content.buffer);
      }
      port.postMessage({ ok: true, parsed } satisfies ParseReply, [...buffers]);
    },
    (error: unknown) => port.postMessage({ ok: false, error: String(error) } satisfies ParseReply),
  );
});

port.postMessage(READY);
