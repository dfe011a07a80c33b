// Use case: POST /v1/webhooks/filter-test: whether an event matches a filter, and if not which clause failed,
// without storing anything (the dashboard's filter editor tries a filter on a recent event with it).
import { problem as fieldProblem, invalidRequest } from '../../domain/field-problems';
import { evaluateFilter, type FilterVerdict } from '../../domain/webhooks/filter';
import { validFilter } from './manage-webhooks';

/** The largest event tried (its JSON): a webhook payload is far smaller; this bounds the work of one test. */
export const MAX_TEST_EVENT_BYTES = 64 * 1024;

/**
 * The verdict of `filter` (checked as a webhook's would be: a 422 with the path of each problem) on `event`, an
 * object shaped as a filter sees an event (a `standard` payload, with `tags`). A null or empty filter matches.
 */
export function testFilter(filter: unknown, event: unknown): Pick<FilterVerdict, 'matches' | 'reason'> {
  const checked = validFilter(filter);
  if (typeof event !== 'object' || event === null || Array.isArray(event))
    throw invalidRequest([fieldProblem(['event'], 'must be a JSON object: an event as a webhook receives it.')]);
  const bytes = Buffer.byteLength(JSON.stringify(event));
  if (bytes > MAX_TEST_EVENT_BYTES)
    throw invalidRequest([
      fieldProblem(['event'], `must be at most ${MAX_TEST_EVENT_BYTES} bytes of JSON; this one is ${bytes}.`),
    ]);
  const { matches, reason } = evaluateFilter(checked ?? {}, event);
  return { matches, reason };
}
