// JSON request bodies: 413 past the size limit, 400 for malformed JSON. Content-Type is not policed:
// every body on these routes is JSON, and `curl -d` (form content type) should just work.
import { InvalidJsonError, PayloadTooLargeError } from '../../domain/errors';
import type { ApiMiddleware } from '../http/context';

export function jsonBody(options: { maxBytes: number }): ApiMiddleware {
  return {
    before: (request) => {
      const { event } = request;
      if (request.context.sendflow.route?.body === 'raw') return;
      if (event.body === null || event.body === undefined || event.body === '') return;
      const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
      if (Buffer.byteLength(raw, 'utf8') > options.maxBytes) {
        throw new PayloadTooLargeError(`Request body exceeds ${options.maxBytes} bytes.`);
      }
      try {
        request.context.sendflow.body = JSON.parse(raw);
      } catch {
        throw new InvalidJsonError('The request body is not valid JSON.');
      }
    },
  };
}
