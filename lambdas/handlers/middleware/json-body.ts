// JSON request bodies: 413 past the size limit, 400 for malformed JSON (saying where: line and column), 422 past the nesting limit. Content-Type
// is not policed: every body on these routes is JSON, and `curl -d` (form content type) should just work.
import { InvalidJsonError, PayloadTooLargeError, ValidationError } from '../../domain/errors';
import { findJsonSyntaxError } from '../../domain/json-syntax';
import type { RouteSpec } from '../../manifest';
import type { ApiMiddleware } from '../http/context';

/**
 * Deepest nesting a body may have. Ours need 4 (a batch of emails with tags); anything far deeper is an attack
 * on whatever walks the value recursively later (a fingerprint, a validator, a logger), so it stops here.
 */
export const MAX_JSON_DEPTH = 32;

/** `largeMaxBytes`: the limit of routes marked `largeBody` (the send routes, attachments); `maxBytes` otherwise. */
export function jsonBody(options: { maxBytes: number; largeMaxBytes?: number }): ApiMiddleware {
  return {
    before: (request) => {
      const { event } = request;
      const route = request.context.sendflow.route as RouteSpec | undefined;
      if (route?.body === 'raw') return;
      if (event.body === null || event.body === undefined || event.body === '') return;
      const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
      const maxBytes = route?.largeBody ? (options.largeMaxBytes ?? options.maxBytes) : options.maxBytes;
      if (Buffer.byteLength(raw, 'utf8') > maxBytes) {
        throw new PayloadTooLargeError(`Request body exceeds ${maxBytes} bytes.`);
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        throw new InvalidJsonError(invalidJsonMessage(raw));
      }
      if (jsonDepth(raw) > MAX_JSON_DEPTH) {
        throw new ValidationError('The request body is nested too deeply.', {
          details: [{ path: 'body', message: `JSON may nest at most ${MAX_JSON_DEPTH} arrays and objects deep.` }],
        });
      }
      request.context.sendflow.body = body;
    },
  };
}

/** "The request body is not valid JSON: line 3, column 9: expected a value …, found `x`." */
export function invalidJsonMessage(raw: string): string {
  const found = findJsonSyntaxError(raw);
  if (!found) return 'The request body is not valid JSON.';
  return `The request body is not valid JSON: line ${found.line}, column ${found.column}: ${found.problem}`;
}

/** How deep arrays and objects nest in JSON text, counted in one pass without recursion (strings skipped). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c)
        i++; // backslash: the next character is escaped
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x5b || char === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (char === 0x5d || char === 0x7d) depth--;
  }
  return deepest;
}
